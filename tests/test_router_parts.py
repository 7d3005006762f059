"""The router's parts on their own: its routing table, TextLane, BlockReplay and ReasoningTokenCounter.

The dialect modules and test_contract.py check what the router emits; these pin the table
and the seams between the router and its collaborators, the way h11's test_state pins its
state machine.
"""

from __future__ import annotations

import pytest

from lmparse import create_parser
from lmparse.events import CONTENT, REASONING
from lmparse.markers import MarkerSet
from lmparse.response.base import BaseResponseParser
from lmparse.response.label import OpenTagLabel
from lmparse.response.replay import BlockReplay
from lmparse.response.routing import NEVER, RESUME, ROUTING, Mark, Plan, State, check_routing, describe_routing
from lmparse.response.text_lane import TextLane
from lmparse.response.tokens import ReasoningTokenCounter

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


# ---- the routing table, as data -----------------------------------------------------------------


def edited(state: State, mark: Mark, plan: Plan | None) -> dict[State, dict[Mark, Plan]]:
    """A copy of ROUTING with one entry replaced (None: removed)."""
    table = {s: dict(row) for s, row in ROUTING.items()}
    if plan is None:
        del table[state][mark]
    else:
        table[state][mark] = plan
    return table


def test_every_state_and_mark_has_a_plan_or_is_declared_impossible() -> None:
    check_routing(ROUTING, NEVER)  # as at import
    for state in State:
        assert set(ROUTING[state]) | NEVER[state] == set(Mark)
        assert not set(ROUTING[state]) & NEVER[state]


def test_a_missing_plan_fails_the_check() -> None:
    with pytest.raises(ValueError, match="PLAIN x REASONING_OPEN: neither a plan nor NEVER"):
        check_routing(edited(State.PLAIN, Mark.REASONING_OPEN, None), NEVER)


def test_a_plan_for_a_mark_declared_impossible_fails_the_check() -> None:
    with pytest.raises(ValueError, match="REASONING x REASONING_OPEN: both a plan and NEVER"):
        check_routing(edited(State.REASONING, Mark.REASONING_OPEN, Plan("open_reasoning", State.REASONING)), NEVER)


def test_only_a_block_can_resume_and_only_an_open_step_enters_a_block() -> None:
    with pytest.raises(ValueError, match="only a block's end can resume"):
        check_routing(edited(State.PLAIN, Mark.FRAMING, Plan("drop", RESUME)), NEVER)
    with pytest.raises(ValueError, match="a block is entered by an open step"):
        check_routing(edited(State.PLAIN, Mark.FRAMING, Plan("drop", State.TOOL)), NEVER)
    with pytest.raises(ValueError, match="a block is entered by an open step"):
        check_routing(edited(State.PLAIN, Mark.TOOL_OPEN, Plan("open_block", State.PLAIN)), NEVER)


def test_the_plans_the_hot_path_takes_for_granted_are_checked() -> None:
    with pytest.raises(ValueError, match="TOOL x BLOCK_OPEN: the router assumes"):
        check_routing(edited(State.TOOL, Mark.BLOCK_OPEN, Plan("end_block", State.TOOL)), NEVER)


def test_every_step_is_a_router_method() -> None:
    for row in ROUTING.values():
        for step, _ in row.values():
            assert callable(getattr(BaseResponseParser, "_" + step))


@pytest.mark.pure_only("a compiled module keeps no docstring")
def test_the_router_docstring_shows_the_table_as_it_is() -> None:
    import lmparse.response.base as base

    table = [line[4:] for line in (base.__doc__ or "").splitlines() if line.startswith("    ")]
    assert "\n".join(table) == describe_routing()


def test_the_state_names_are_the_enum_members() -> None:
    assert [create_parser(None, r).state for r in (None, "qwen3")] == ["plain", "reasoning_start"]
    assert {s.name.lower() for s in State} == {"plain_start", "plain", "reasoning_start", "reasoning", "tool",
                                               "after_block"}


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


def test_a_reply_without_tools_opens_no_block_and_drops_nothing() -> None:
    p = create_parser("qwen", None, request={"tools": TOOLS, "tool_choice": "none"})  # tool markup is content
    deltas = p.stream_chunk('<tool_call>{"name": "f", "arguments": {}}</tool_call>', final=True)
    assert "".join(d.content or "" for d, _ in deltas) == '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    assert (p.tool_parser, p.dropped, p.state) == (None, [], "plain")


# ---- TextLane -----------------------------------------------------------------------------------


def lane(label: OpenTagLabel | None = None) -> TextLane:
    lane = TextLane(MarkerSet.of(["<think>", "\n<tool_call>"]), MarkerSet.of(["</think>"]),
                    label or OpenTagLabel("", "<think>"))
    lane.follow(State.PLAIN)
    return lane


def test_the_lane_takes_text_without_markers_whole() -> None:
    lane_ = lane()
    assert lane_.take("hello there") == 11
    assert lane_.channel is CONTENT


def test_the_lane_holds_what_may_begin_a_marker() -> None:
    assert lane().take("a line\n") == 6


def test_the_lane_leaves_markers_to_the_router() -> None:
    assert lane().take("so <think>") == -1


def test_the_lane_follows_the_router_state() -> None:
    lane_ = lane()
    lane_.follow(State.REASONING)
    assert lane_.take("<think> is text here") == 20
    assert lane_.channel is REASONING
    for state in (State.TOOL, State.AFTER_BLOCK, State.PLAIN_START, State.REASONING_START):
        lane_.follow(state)
        assert lane_.take("text") == -1


def test_the_lane_waits_for_a_reasoning_label() -> None:
    label = OpenTagLabel("thought\n", "<|channel>")
    lane_ = lane(label)
    lane_.follow(State.REASONING)
    label.opened()
    assert lane_.take("thought\nhm") == -1  # the router skips the label
    label.pending = False
    assert lane_.take("hm") == 2


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
