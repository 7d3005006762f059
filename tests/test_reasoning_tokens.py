"""Reasoning tokens are counted over the raw reasoning-tag interval, tool syntax included."""

from __future__ import annotations

import pytest

from lmparse import create_parser

from .support.tokenizers import load_tokenizer

CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'


def count_per_char_tokens(text: str, reasoning_parser: str = "default", tool_parser: str | None = "qwen") -> int:
    p = create_parser(tool_parser=tool_parser, reasoning_parser=reasoning_parser)
    for i, ch in enumerate(text):
        p.stream_chunk(ch, token_ids=[i], final=i == len(text) - 1)
    return p.reasoning_tokens


@pytest.mark.parametrize(
    "text,expected",
    [
        ("<think>abc</think>xyz", 3),
        ("abc</think>xyz", 3),  # starts in reasoning: the interval opens at 0
        ("ab" + CALL + "cd</think>e", 4 + len(CALL)),  # tool syntax inside <think> counts
        ("abc", 3),  # never closed
        ("</think>" + CALL, 0),
        ("ab<tool_call>not json</think>x", len("ab<tool_call>not json")),  # a block that turned back into text
    ],
)
def test_reasoning_tokens_cover_the_raw_interval(text, expected):
    assert count_per_char_tokens(text) == expected


def test_no_token_ids_means_no_count():
    p = create_parser(reasoning_parser="default")
    assert p.parse_complete("<think>a</think>b").reasoning_tokens is None


def test_thinking_off_counts_nothing():
    p = create_parser(reasoning_parser="default", request={"chat_template_kwargs": {"enable_thinking": False}})
    p.stream_chunk("abc", token_ids=[1, 2, 3], final=True)
    assert p.reasoning_tokens == 0


def test_real_qwen3_token_stream():
    tok = load_tokenizer("qwen3")
    text = "<think>\nLet me think about 北京 weather 😀.\n" + CALL + "\nDone thinking.\n</think>\n\nIt is sunny."
    ids = tok.encode(text)
    think_open, think_close = tok.encode("<think>"), tok.encode("</think>")
    assert len(think_open) == len(think_close) == 1
    expected = ids.index(think_close[0]) - ids.index(think_open[0]) - 1
    p = create_parser(tool_parser="qwen", reasoning_parser="qwen3")
    prev = ""
    for k in range(len(ids)):
        # Incremental decode: the new text of token k (never split inside a character here).
        full = tok.decode(ids[: k + 1])
        piece = full[len(prev):]
        if piece.endswith("\ufffd"):
            piece = ""
        else:
            prev = full
        p.stream_chunk(piece, token_ids=[ids[k]], final=k == len(ids) - 1)
    assert p.reasoning_tokens == expected
