"""The DESIGN.md §7 contract, once, over every dialect (ALL_WIRES x CASES).

Each case is written against the one ``Wire`` interface (tests/support/wires.py) and runs
whole, one character per chunk, under seeded random chunkings and at every real token
boundary of the dialect's tokenizers (with token ids), through the shared validator.  What
only one family has (Kimi ids, DSML ``string=``, Mistral's forms, pythonic validity) stays
in that family's module.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Callable, Iterator

import pytest

from lmparse import create_parser

from .support.stream import Expected, check_invariants, folded, stream_in_steps
from .support.wires import ALL_WIRES, QWEN, PythonicWire, Wire

A = '{"city": "Paris", "days": 3}'
Case = tuple[str, Expected, Any]  # (text, expected, request)


def content_only(w: Wire) -> Case:
    if w.starts_in_reasoning:
        return "Hello, world.", Expected(reasoning="Hello, world."), w.request()
    return "Hello, world.", Expected("Hello, world."), w.request()


def one_call_after_reasoning(w: Wire) -> Case:
    text = f"{w.think_open}r{w.think_close}" + w.call("get_weather", A)
    return text, Expected(None, "r", [("get_weather", w.arguments(A))]), w.request()


def call_nested_in_reasoning(w: Wire) -> Case:
    text = f"{w.think_open}think" + w.call("get_weather", A) + f"more{w.think_close}answer"
    if w.call_ends_reasoning:  # the close tag after the call is stray
        return text, Expected("moreanswer", "think", [("get_weather", w.arguments(A))]), w.request()
    return text, Expected("answer", "thinkmore", [("get_weather", w.arguments(A))]), w.request()


def filtered_call_nested_in_reasoning(w: Wire) -> Case:
    text = f"{w.think_open}think" + w.call("zzz", A) + f"more{w.think_close}answer"
    if w.call_ends_reasoning:
        return text, Expected("moreanswer", "think", []), w.request()
    return text, Expected("answer", "thinkmore", []), w.request()


def unknown_name_dropped_dense_index(w: Wire) -> Case:
    text = w.plain + w.calls(("zzz", A), ("g", "{}"), ("f", '{"a": "1"}'))
    return text, Expected(None, None, [("g", "{}"), ("f", '{"a": "1"}')]), w.request()


def missing_reasoning_close(w: Wire) -> Case:
    text = f"{w.think_open}think" + w.call("get_weather", A) + "\nmore"
    if w.call_ends_reasoning:
        return text, Expected("\nmore", "think", [("get_weather", w.arguments(A))]), w.request()
    return text, Expected(None, "think\nmore", [("get_weather", w.arguments(A))]), w.request()


def no_tools_keeps_markup(w: Wire) -> Case:
    return w.plain + w.call("get_weather", A), Expected(w.call("get_weather", A)), w.request(tools=None)


def tool_choice_none_keeps_markup(w: Wire) -> Case:
    return w.plain + w.call("get_weather", A), Expected(w.call("get_weather", A)), w.request(tool_choice="none")


def thinking_off_starts_plain(w: Wire) -> Case:
    call = [("get_weather", w.arguments(A))]
    expected = Expected("Hi", None, call) if w.honours_thinking_off else Expected(None, "Hi", call)
    return "Hi" + w.call("get_weather", A), expected, w.request(chat_template_kwargs=w.thinking_off)


def truncated_before_name_is_dropped(w: Wire) -> Case:
    """Issue 10 item 8: a block cut off before its call's name is syntax (kept in
    ``dropped``, tests/test_truncated.py), no longer content."""
    full = w.call("get_weather", A)
    cut = full[: full.index("get_weather") + 3]
    return w.plain + "ok" + cut, Expected("ok"), w.request()


def reasoning_content_tool_in_one_reply(w: Wire) -> Case:
    args = '{"days": 1}'
    text = f"{w.think_tag}a{w.think_close}b" + w.call("get_weather", args)
    return text, Expected("b", "a", [("get_weather", args)]), w.request()


def named_choice_filters_others(w: Wire) -> Case:
    text = w.plain + w.calls(("get_weather", A), ("g", "{}"))
    only_g = {"type": "function", "function": {"name": "g"}}
    return text, Expected(None, None, [("g", "{}")]), w.request(tool_choice=only_g)


def applies(case: Callable[[Wire], Case], w: Wire) -> bool:
    """Cases about leaving reasoning need a reply that can start there."""
    if case is thinking_off_starts_plain:
        return w.starts_in_reasoning and w.thinking_off is not None
    return True


CASES = (
    content_only, one_call_after_reasoning, call_nested_in_reasoning, filtered_call_nested_in_reasoning,
    unknown_name_dropped_dense_index, missing_reasoning_close, no_tools_keeps_markup,
    tool_choice_none_keeps_markup, thinking_off_starts_plain, truncated_before_name_is_dropped,
    reasoning_content_tool_in_one_reply, named_choice_filters_others,
)


def matrix() -> Iterator[Any]:
    for w in ALL_WIRES:
        for case in CASES:
            if applies(case, w):
                yield pytest.param(w, case.__name__, *case(w), id=f"{w.id}-{case.__name__}")


@pytest.mark.parametrize("wire,case_id,text,expected,request_", list(matrix()))
def test_contract(wire: Wire, case_id: str, text: str, expected: Expected, request_: Any) -> None:
    wire.check(text, expected, request=request_)


@pytest.mark.parametrize("wire", ALL_WIRES, ids=[w.id for w in ALL_WIRES])
def test_dropped_calls_are_recorded(wire: Wire) -> None:
    p = wire.parser(wire.request())
    m = p.parse_complete(wire.plain + wire.calls(("zzz", "{}"), ("f", "{}")))
    assert [tc.function.name for tc in m.tool_calls] == ["f"]
    assert [(d.name, d.reason) for d in p.dropped] == [("zzz", "not among the request's tools")]


# A line with every hazard of every family: tags, brackets, braces, escapes, quotes, multibyte
# characters and a marker; its value must stream early, with a small held suffix.
LONG_LINE = 'The quick brown fox <jumps> [over] {3} < 4 lazy dogs; é 😀 \\ "q" [TOOL_CALLS]\n'
STREAMING_WIRES = tuple(w for w in ALL_WIRES if not isinstance(w, PythonicWire))  # a pythonic call is out at its ")"


def long_value(size: int = 1 << 20) -> str:
    value = (LONG_LINE * (size // len(LONG_LINE) + 1))[:size]
    return value.rstrip("\n")  # a value's last newline may be the template's formatting


@pytest.mark.parametrize("wire", STREAMING_WIRES, ids=[w.id for w in STREAMING_WIRES])
def test_long_string_value_streams_in_bounded_memory(wire: Wire) -> None:
    value = long_value()
    args = json.dumps({"s": value}, ensure_ascii=False)
    text = wire.plain + wire.call("f", args)
    written = json.dumps(value, ensure_ascii=False)[1:-1] if wire.verbatim else value
    start = text.index(written[:100])
    deltas, first_value_at, max_pending = stream_in_steps(wire.parser(wire.request()), text, start, "quick")
    check_invariants(deltas)
    content, reasoning, calls = folded(deltas)
    assert (content, reasoning, [name for name, _ in calls]) == (None, None, ["f"])
    assert json.loads(calls[0][1]) == {"s": value}
    if wire.verbatim:
        assert calls[0][1] == args
    assert first_value_at is not None and first_value_at < len(value) // 20
    assert max_pending < 256


@pytest.mark.parametrize(
    "doctor",
    [
        lambda c: c.replace("Paris", "Pars"),  # a character lost inside a value
        lambda c: c.replace("Paris", "Parris"),  # one emitted twice
        lambda c: c.replace("check", "chek"),  # one lost from content
        lambda c: c.replace("check.", "check.."),  # content duplicated
        lambda c: c.replace("plan", "nalp"),  # reordered
    ],
    ids=["lost-in-arguments", "duplicated-in-arguments", "lost-in-content", "duplicated-in-content", "reordered"],
)
def test_conservation_rejects_a_doctored_stream(doctor: Callable[[str], str]) -> None:
    text = "<think>plan</think>Let me check.\n" + QWEN.call("f", A)
    deltas = create_parser(tool_parser="qwen", reasoning_parser="default").stream_chunk(text, final=True)
    check_invariants(deltas, text)  # the real stream conserves
    for delta, _ in deltas:
        for tc in delta.tool_calls or ():
            if tc.function and tc.function.arguments:
                tc.function.arguments = doctor(tc.function.arguments)
        for name in ("content", "reasoning_content"):
            if getattr(delta, name):
                setattr(delta, name, doctor(getattr(delta, name)))
    with pytest.raises(AssertionError):
        check_invariants(deltas, text)
