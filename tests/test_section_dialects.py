"""The section/call dialects (``kimi-k2``, ``deepseek-v3``, ``deepseek-v31``) against DESIGN.md §7.

Every case runs whole, one character per chunk, under seeded random chunkings and at
every real token boundary of the family's tokenizers (Kimi has no public vocabulary:
its markers are single tokens, which the arbitrary chunkings cover and more).
Wire text is written here from the official templates' layout, independently of render().
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_chunkings, random_chunks, result_of
from .support.wires import KIMI, SECTION_WIRES, V3, SectionWire


WIRES = SECTION_WIRES
REQUEST = KIMI.request()  # thinking on: replies start in reasoning
PLAIN = KIMI.request(chat_template_kwargs=KIMI.thinking_off)
TOOLS = REQUEST["tools"]


def cases(w: SectionWire):
    """(id, text, expected, request) for one section dialect."""
    A = '{"city": "Paris", "days": 3}'
    one = w.block(("get_weather", A))
    yield "section_at_reply_start", one, Expected(None, None, [("get_weather", A)]), PLAIN
    yield "content_then_call", "</think>Let me check." + one, Expected("Let me check.", None, [("get_weather", A)]), REQUEST
    yield "empty_arguments", "</think>" + w.block(("f", "{}")), Expected(None, None, [("f", "{}")]), REQUEST
    no_args = w.open + w.entry("f", "") + w.close
    yield "no_arguments_at_all", "</think>" + no_args, Expected(None, None, [("f", "{}")]), REQUEST
    dup = '{"a": 1, "a": 2}'
    yield "duplicate_keys_kept", "</think>" + w.block(("f", dup)), Expected(None, None, [("f", dup)]), REQUEST
    yield (
        "several_calls_in_one_section",
        "</think>" + w.block(("f", A), ("g", "{}"), ("f", '{"x": [1]}')),
        Expected(None, None, [("f", A), ("g", "{}"), ("f", '{"x": [1]}')]),
        REQUEST,
    )
    spaced = w.open + "\n" + w.entry("f", A) + "\n\n" + w.entry("g", "{}", 1) + "\n" + w.close
    yield "whitespace_between_calls", "</think>" + spaced, Expected(None, None, [("f", A), ("g", "{}")]), REQUEST
    yield (
        "two_sections_newline",
        "</think>" + one + "\n" + w.block(("g", "{}")),
        Expected(w.between_blocks("\n"), None, [("get_weather", A), ("g", "{}")]),  # the templates write one section
        REQUEST,
    )
    yield (
        "two_sections_blank_line",
        "</think>" + one + "\n\n" + w.block(("g", "{}")),
        Expected(w.between_blocks("\n\n"), None, [("get_weather", A), ("g", "{}")]),
        REQUEST,
    )
    yield "text_after_section", "</think>" + one + "\nDone.", Expected("\nDone.", None, [("get_weather", A)]), REQUEST
    yield "reasoning_after_tool", "a" + one + "b</think>", Expected(None, "ab", [("get_weather", A)]), REQUEST
    tricky = json.dumps({"s": f'é \\ " }} ] {w.close} {w.call_end} {w.call_begin} ``` 😀', "n": [1, {"k": None}], "t": True}, ensure_ascii=False)
    yield "markers_inside_strings_are_data", "</think>" + w.block(("f", tricky)), Expected(None, None, [("f", tricky)]), REQUEST
    yield (
        "double_encoded_arguments_unwrapped",
        "</think>" + w.block(("f", '"{\\"q\\": 1}"')),
        Expected(None, None, [("f", '{"q": 1}')]),
        REQUEST,
    )
    yield "null_arguments_are_empty", "</think>" + w.block(("f", "null")), Expected(None, None, [("f", "{}")]), REQUEST
    pretty = json.dumps({"a": [1, 2], "b": {"c": "d"}}, indent=2)
    yield "pretty_printed_arguments_verbatim", "</think>" + w.block(("f", pretty)), Expected(None, None, [("f", pretty)]), REQUEST
    # Malformed or cut short.
    yield (
        "missing_call_end_accepted_at_section_end",
        "</think>" + w.block(("f", A))[: -len(w.call_end + w.close)] + w.close,
        Expected(None, None, [("f", A)]),
        REQUEST,
    )
    yield (
        "missing_call_end_before_next_call",
        "</think>" + w.open + w.entry("f", A)[: -len(w.call_end)] + w.entry("g", "{}", 1) + w.close,
        Expected(None, None, [("f", A), ("g", "{}")]),
        REQUEST,
    )
    yield (
        "missing_section_end_at_final",
        "</think>" + w.block(("f", A))[: -len(w.close)],
        Expected(None, None, [("f", A)]),
        REQUEST,
    )
    trunc = w.open + w.entry("f", '{"a": [1, 2')
    # Issue 23 rule 6 (a malformed call never yields arguments that are not JSON): arguments cut
    # off, or ended by the call's end tag, are what streamed closed by their owed closers alone;
    # text after a complete object is not arguments (it is a ``dropped`` record, never appended
    # as before rule 6, which made the arguments unparseable). Whitespace after the object is
    # let out as it streams (valid JSON; it cannot be known to precede junk).
    yield (
        "truncated_arguments_closed_as_json",
        "</think>ok" + trunc[: trunc.index('[1, 2') + 5],
        Expected("ok", None, [("f", '{"a": [1, 2]}')]),
        REQUEST,
    )
    yield (
        "broken_arguments_then_call_end",
        "</think>" + w.open + w.entry("f", '{"a": 1').replace("\n```" + w.call_end, w.call_end) + w.close,
        Expected(None, None, [("f", '{"a": 1}')]),
        REQUEST,
    )
    yield (
        "text_after_arguments_dropped",
        "</think>" + w.open + w.entry("f", '{"a": 1}  and  more').replace("\n```" + w.call_end, w.call_end) + w.close,
        Expected(None, None, [("f", '{"a": 1}  ')]),
        REQUEST,
    )
    yield "literal_tag_in_prose", "</think>use " + w.open + " tags", Expected("use " + w.open + " tags"), REQUEST
    yield (
        "tag_in_prose_then_real_call",
        "</think>see " + w.open + " x " + one,
        Expected("see " + w.open + " x ", None, [("get_weather", A)]),
        REQUEST,
    )
    yield (
        "prose_after_a_call_ends_the_section",
        "</think>" + w.open + w.entry("f", A) + " and so on",
        Expected(" and so on", None, [("f", A)]),
        REQUEST,
    )


ALL = [(w, *c) for w in WIRES for c in cases(w)]


@pytest.mark.parametrize("wire,case_id,text,expected,request_", ALL, ids=[f"{a[0].id}-{a[1]}" for a in ALL])
def test_section_dialect(wire, case_id, text, expected, request_):
    wire.check(text, expected, request_)


# ---- dialect specifics ---------------------------------------------------------------------


def parse(w: SectionWire, text: str, request=PLAIN):
    return w.parser(request).parse_complete(text)


def test_kimi_model_id_is_the_call_id():
    m = parse(KIMI, KIMI.block(("get_weather", "{}"), ("f", '{"a": 1}')))
    assert [(t.id, t.function.name) for t in m.tool_calls] == [("functions.get_weather:0", "get_weather"), ("functions.f:1", "f")]


@pytest.mark.parametrize(
    "header,name",
    [("functions.get_weather:12", "get_weather"), ("get_weather:0", "get_weather"), ("functions.get_weather", "get_weather"),
     ("functions.ns.tool-x:3", "ns.tool-x"), (" functions.f:0 ", "f")],
)
def test_kimi_name_is_the_id_without_prefix_and_index(header, name):
    text = f"{KIMI.open}{KIMI.call_begin}{header}<|tool_call_argument_begin|>{{}}{KIMI.call_end}{KIMI.close}"
    (call,) = parse(KIMI, text, request=None).tool_calls
    assert (call.id, call.function.name) == (header.strip(), name)


def test_kimi_repeated_id_gets_a_fresh_one():
    text = KIMI.open + KIMI.entry("f", "{}", 0) + KIMI.entry("g", "{}", 0) + KIMI.close
    KIMI.check(text, Expected(None, None, [("f", "{}"), ("g", "{}")]), PLAIN)
    ids = [t.id for t in parse(KIMI, text).tool_calls]
    assert ids[0] == "functions.f:0" and ids[1] != ids[0]


def test_kimi_call_without_name_is_dropped():
    text = KIMI.open + KIMI.call_begin + "functions.:0<|tool_call_argument_begin|>{}" + KIMI.call_end + KIMI.entry("f", "{}", 1) + KIMI.close
    KIMI.check(text, Expected(None, None, [("f", "{}")]), PLAIN)


@pytest.mark.parametrize(
    "layout",
    [
        "function<｜tool▁sep｜>{name}\n```json\n{args}```",  # fence closed right after the JSON
        "function<｜tool▁sep｜>{name}\n{args}",  # no fence at all
        "function<｜tool▁sep｜>{name}\n```json{args}\n```\n",
        "{name}\n```json\n{args}\n```",  # no call type
    ],
)
def test_deepseek_v3_fence_variants(layout):
    w = replace(V3, layout=layout)
    A = '{"city": "Paris"}'
    w.check("</think>" + w.block(("f", A), ("g", "{}")), Expected(None, None, [("f", A), ("g", "{}")]), REQUEST)


def test_deepseek_v3_header_running_on_is_prose():
    text = V3.open + V3.call_begin + "function<｜tool▁sep｜>" + "x" * 600
    V3.check(text, Expected(text), PLAIN)


# ---- render() round trips (hypothesis) ------------------------------------------------------

MARKERS = ("<think>", "</think>", "<|tool_call", "<｜tool▁call")
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from(list('<>/"\\\n|`')), max_size=30)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(texts, kids, max_size=3), max_leaves=8)
arguments = st.dictionaries(texts, json_values, max_size=4).flatmap(
    lambda d: st.sampled_from([None, 2]).map(lambda indent: json.dumps(d, ensure_ascii=False, indent=indent))
)


def clean(text: str) -> bool:
    return not any(m in text for m in MARKERS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(WIRES), st.lists(st.tuples(names, arguments), max_size=3), texts, texts, texts, st.integers(0, 1000))
def test_render_round_trip(wire, calls, reasoning, content, tail, seed):
    assume(clean(reasoning) and clean(content) and clean(tail))
    wire_text = ToolParserManager.get(wire.tool_parser).render(calls) if calls else ""
    tail = tail if calls else ""
    text = f"<think>{reasoning}</think>{content}{wire_text}{tail}"
    want = (content + tail or None, reasoning or None, [(n, a) for n, a in calls])

    def make():
        return create_parser(tool_parser=wire.tool_parser, reasoning_parser="deepseek-v3")  # no request: any name, starts plain

    assert result_of(make().parse_complete(text)) == want
    check_chunkings(make, text, want, (list(text), random_chunks(text, random.Random(seed), 9)))
