"""JsonValueScanner: the lexical end of one JSON value under any chunking, and bounded buffering."""

from __future__ import annotations

import json
import random

import pytest

from lmparse import create_parser
from lmparse.tools.json_scanner import JsonValueScanner

SHORT_STRINGS = json.dumps(["x", '"', "\\", "{", "}", "[", "]", "plain"] * 2048)

VALUES = [
    '{"a": "x\\"y}", "b": [1, {"c": "\\\\"}]}',
    '"str\\\\"',
    '"esc \\" \\u00e9 end"',
    "123.5e-3",
    "-7",
    "true",
    "null",
    "[]",
    "{}",
    '[[[[["deep"]]]]]',
    '{"k": "' + "z" * 3000 + '"}',
    '{"k": "' + "\\n\\\"" * 500 + '"}',
    SHORT_STRINGS,
]


def scan_chunked(value_and_tail: str, sizes: list[int], rng: random.Random) -> tuple[int, JsonValueScanner]:
    scanner = JsonValueScanner()
    consumed = 0
    i = 0
    while i < len(value_and_tail):
        k = rng.choice(sizes)
        chunk = value_and_tail[i : i + k]
        i += k
        consumed += scanner.scan(chunk, 0, final=i >= len(value_and_tail))
        if scanner.done:
            break
    return consumed, scanner


@pytest.mark.parametrize("value", VALUES, ids=lambda v: v[:20])
@pytest.mark.parametrize("sizes", [[1], [2], [3], [4], [8], [16], [256], [1, 2, 5, 300], [10**7]])
def test_value_end_found_under_any_chunking(value, sizes):
    consumed, scanner = scan_chunked(value + " , tail}", sizes, random.Random(7))
    assert scanner.done and not scanner.broken
    assert consumed == len(value)


@pytest.mark.parametrize("size", [1, 4, 8, 16, 256, None])
def test_short_string_array(size):
    text = SHORT_STRINGS + "}"
    if size is None:
        chunks = [text]
    else:
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
    scanner = JsonValueScanner()
    consumed = 0
    for chunk in chunks:
        consumed += scanner.scan(chunk, 0)
        if scanner.done:
            break
    assert scanner.done and consumed == len(SHORT_STRINGS)


def test_scalar_at_end_of_input_needs_final():
    s = JsonValueScanner()
    assert s.scan("12", 0) == 2 and not s.done
    assert s.scan("3", 0, final=True) == 1 and s.done


@pytest.mark.parametrize("text,stop", [('{"a": 1 </tool_call>', 8), ("<x>", 0), ('[1, 2<', 5)])
def test_protocol_marker_outside_a_string_breaks_the_value(text, stop):
    s = JsonValueScanner()
    assert s.scan(text, 0) == stop
    assert s.done and s.broken


def test_marker_inside_a_string_is_data():
    s = JsonValueScanner()
    text = '{"a": "</tool_call>"}'
    assert s.scan(text, 0) == len(text) and s.done and not s.broken


def test_one_mebibyte_string_argument_streams_with_bounded_pending():
    value = "".join(random.Random(3).choices("abcdefgh \\n\"é😀", k=1 << 20))  # escapes, quotes, multibyte throughout
    assert all(ch in value for ch in '\\"é😀')
    args = json.dumps({"content": value}, ensure_ascii=False)
    text = '<tool_call>\n{"name": "write", "arguments": ' + args + "}\n</tool_call>"
    parser = create_parser(tool_parser="qwen")
    streamed = []
    chunks_with_args = 0
    for i in range(0, len(text), 1024):
        deltas = parser.stream_chunk(text[i : i + 1024], final=i + 1024 >= len(text))
        assert parser.held_chars <= 64, "the router must not buffer argument text"
        for d, _ in deltas:
            for tc in d.tool_calls or ():
                if tc.function.arguments:
                    streamed.append(tc.function.arguments)
                    chunks_with_args += 1
    assert "".join(streamed) == args
    assert chunks_with_args >= len(text) // 1024 - 2, "arguments must stream chunk by chunk"
