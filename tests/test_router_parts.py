"""The router's parts on their own: its state table, BlockReplay and ReasoningTokenCounter.

The dialect modules and test_contract.py check what the router emits; these pin the seams
between it and its two collaborators, the way h11's test_state pins its state machine.
"""

from __future__ import annotations

import pytest

from lmparse import create_parser
from lmparse.response.replay import BlockReplay
from lmparse.response.tokens import ReasoningTokenCounter

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


# ---- the state table, observed through the read-only ``state`` -------------------------------


def states(parser, chunks: list[str]) -> list[str]:
    seen = [parser.state]
    for chunk in chunks:
        parser.stream_chunk(chunk)
        seen.append(parser.state)
    return seen


def test_a_reply_that_opens_in_reasoning_drops_a_leading_open_tag_then_reasons() -> None:
    p = create_parser("qwen", "qwen3", request={"tools": TOOLS})
    assert states(p, ["\n", "<think>", "hm", "</think>", "ok"]) == [
        "reasoning_start", "reasoning_start", "reasoning", "reasoning", "plain", "plain"]


def test_text_before_the_open_tag_ends_the_reply_start() -> None:
    p = create_parser("qwen", "qwen3", request={"tools": TOOLS})
    assert states(p, ["hm"]) == ["reasoning_start", "reasoning"]
    deltas = p.stream_chunk("<think>", final=True)
    assert [d.reasoning_content for d, _ in deltas] == ["<think>"]  # not leading: just text


def test_a_block_then_whitespace_waits_in_after_block() -> None:
    p = create_parser("qwen", None, request={"tools": TOOLS})
    assert states(p, ["<tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>", "\n", "x"]) == [
        "plain", "tool", "tool", "after_block", "after_block", "plain"]


def test_a_bare_start_is_possible_only_at_the_reply_start() -> None:
    p = create_parser("llama3", None, request={"tools": TOOLS})
    # After the envelope the block stays open: Llama 3 may write "; {...}" for a second call.
    assert states(p, [" ", '{"name": "f", "parameters": {}}']) == ["plain_start", "plain_start", "tool"]
    q = create_parser("llama3", None, request={"tools": TOOLS})
    assert states(q, ["Hi {"]) == ["plain_start", "plain"]


def test_a_rejected_block_returns_to_where_it_came_from() -> None:
    p = create_parser("qwen", "qwen3", request={"tools": TOOLS})
    p.stream_chunk("think <tool_call>")
    assert p.state == "tool"
    deltas = p.stream_chunk("not json</think>after", final=True)
    assert "".join(d.reasoning_content or "" for d, _ in deltas) == "<tool_call>not json"
    assert p.state == "plain"


# ---- BlockReplay -------------------------------------------------------------------------------


def test_replay_gives_back_the_opening_and_everything_after_it() -> None:
    r = BlockReplay()
    r.begin("<tool_call>", 10, opening_in_payload=False)
    r.advance(False, '{"na')
    r.advance(False, 'me": ')
    assert r.holding
    assert r.replay("rest") == ("<tool_call>", '{"name": rest', 21)
    assert not r.holding


def test_replay_of_a_payload_opening_does_not_repeat_it() -> None:
    r = BlockReplay()
    r.begin("<function=", 0, opening_in_payload=True)
    r.advance(False, "<function=f")  # the tool parser read the tag as payload
    assert r.replay(">x") == ("<function=", "f>x", 10)


def test_a_commit_lets_the_copy_go() -> None:
    r = BlockReplay()
    r.begin("<tool_call>", 0, opening_in_payload=False)
    r.advance(False, '{"name": "f"')
    r.advance(True, ", ")
    assert not r.holding


# ---- ReasoningTokenCounter ---------------------------------------------------------------------


def test_tokens_are_counted_inside_closed_and_open_intervals() -> None:
    c = ReasoningTokenCounter(in_reasoning=False)
    for start in range(10):  # one token per character
        c.note(start, 1, [start])
    c.open(2)
    c.close(5)  # tokens 2, 3, 4
    c.open(8)  # tokens 8, 9 while open
    c.settle(10)
    assert (c.seen, c.count) == (True, 5)


def test_only_settled_tokens_are_classified() -> None:
    c = ReasoningTokenCounter(in_reasoning=True)
    c.note(0, 6, [1, 2, 3])  # three tokens spread over six characters: starts 0, 2, 4
    c.settle(3)
    assert c.count == 2
    c.close(3)  # the token at 4 is after the interval
    c.settle(100)
    assert c.count == 2


def test_a_later_open_moves_the_start_of_the_interval() -> None:
    c = ReasoningTokenCounter(in_reasoning=True)
    for start in range(4):
        c.note(start, 1, [start])
    c.open(2)  # a dropped leading tag: reasoning starts after it
    c.settle(4)
    assert c.count == 2


@pytest.mark.parametrize("ids", [None, [1]])
def test_the_parser_reports_no_count_without_token_ids(ids) -> None:
    p = create_parser("qwen", "qwen3")
    p.stream_chunk("hm</think>ok", ids, final=True)
    assert p.reasoning_tokens == (None if ids is None else 1)
