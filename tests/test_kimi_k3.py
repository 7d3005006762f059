"""Kimi-K3 XTML (``kimi-k3`` tool and reasoning parsers).

The DESIGN §7 case table runs through tests/test_contract.py (``KIMI_K3`` in ALL_WIRES; no
Kimi-K3 tokenizer exists here, so arbitrary chunkings only).  Here: typed arguments, escaped
attributes, the ``json`` argument form, the message framing unwrapped with and without
tools, reasoning's start from the switch or the prompt, round trips through the official
template and hypothesis round trips with attribute escapes and closer-like strings.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ReasoningParserManager, ToolParserManager, create_parser

from .support.stream import Expected, check_chunkings, check_parse, decoded, random_chunks, result_of
from .support.wires import KIMI_K3, xtml_argument, xtml_attribute

TOOLS = KIMI_K3.request()["tools"]
OFF = {"chat_template_kwargs": {"thinking": False}}
RESPONSE, END_RESPONSE = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
THINK_END = "<|close|>think<|sep|>"
END_MESSAGE = "<|close|>message<|sep|><|end_of_msg|>"


def parser(request=None, prompt=None, reasoning="kimi-k3"):
    return create_parser(tool_parser="kimi-k3", reasoning_parser=reasoning, prompt=prompt,
                         request={"tools": TOOLS} if request is None else request)


def call(name: str, *arguments: str) -> str:
    return f'<|open|>call tool="{xtml_attribute(name)}" index="1"<|sep|>{"".join(arguments)}<|close|>call<|sep|>'


def tools(*calls: str) -> str:
    return KIMI_K3.open + "".join(calls) + KIMI_K3.close


# ---- values: typed arguments, escaped attributes, the json form -------------------------------

def test_types_decide_string_or_json():
    body = call("typed", xtml_argument("s", "3"), '<|open|>argument key="i" type="number"<|sep|>3<|close|>argument<|sep|>',
                '<|open|>argument key="b" type="boolean"<|sep|>true<|close|>argument<|sep|>',
                '<|open|>argument key="z" type="null"<|sep|>null<|close|>argument<|sep|>',
                '<|open|>argument key="o" type="object"<|sep|>{"k": [1, "<|close|>argument<|sep|>"]}<|close|>argument<|sep|>')
    got = check_parse(parser, THINK_END + tools(body))[2]
    assert [(n, json.loads(a)) for n, a in got] == [
        ("typed", {"s": "3", "i": 3, "b": True, "z": None, "o": {"k": [1, "<|close|>argument<|sep|>"]}})]


def test_string_typed_value_is_raw_text_even_if_it_looks_like_json():
    body = call("f", '<|open|>argument key="a" type="string"<|sep|>"quoted" {1}<|close|>argument<|sep|>')
    assert check_parse(parser, THINK_END + tools(body))[2] == [("f", '{"a": "\\"quoted\\" {1}"}')]


@pytest.mark.parametrize("raw", ['a"b', "a&b", "&quot;", "&amp;quot;", 'x&"<|sep|>\n'])
def test_escaped_attributes_decode(raw):
    body = call(f"f{raw}", f'<|open|>argument key="{xtml_attribute(raw)}" type="string"<|sep|>v<|close|>argument<|sep|>')
    request = {"tools": [{"type": "function", "function": {"name": f"f{raw}"}}]}
    got = check_parse(lambda: parser(request), THINK_END + tools(body))[2]
    assert got == [(f"f{raw}", json.dumps({raw: "v"}))]


def test_json_argument_form_carries_the_whole_object():
    body = call("f", '<|open|>json type="object"<|sep|>{"a": 1, "s": "<|close|>json<|sep|>"}<|close|>json<|sep|>')
    assert check_parse(parser, THINK_END + tools(body))[2] == [("f", '{"a": 1, "s": "<|close|>json<|sep|>"}')]


@pytest.mark.parametrize("body,arguments", [
    ("[1, 2]", "{}"), ("", "{}"), ("7", "{}"), ("null", "{}"),
])
def test_json_form_that_is_not_an_object_invents_nothing(body, arguments):
    text = THINK_END + tools(call("f", f'<|open|>json type="object"<|sep|>{body}<|close|>json<|sep|>'))
    assert check_parse(parser, text)[2] == [("f", arguments)]


def test_no_arguments():
    assert check_parse(parser, THINK_END + tools(call("f")))[2] == [("f", "{}")]


# ---- framing and reasoning ---------------------------------------------------------------------

WEATHER = call("get_weather", xtml_argument("city", "Oslo"))


@pytest.mark.parametrize("text,request_,expected", [
    # thinking on (the default): the prompt ends in the think opener
    (f"hmm{THINK_END}{RESPONSE}Hi.{END_RESPONSE}{END_MESSAGE}", None, ("Hi.", "hmm", [])),
    # the think closer skipped: the response opener ends reasoning
    (f"hmm{RESPONSE}Hi.{END_RESPONSE}{END_MESSAGE}", None, ("Hi.", "hmm", [])),
    # thinking off: the reply starts inside the response element
    (f"Hi.{END_RESPONSE}{tools(WEATHER)}{END_MESSAGE}", OFF, ("Hi.", None, [("get_weather", '{"city": "Oslo"}')])),
    # an empty response element before the tools
    (f"{RESPONSE}{END_RESPONSE}{tools(WEATHER)}{END_MESSAGE}", OFF, (None, None, [("get_weather", '{"city": "Oslo"}')])),
])
def test_content_is_unwrapped(text, request_, expected):
    request = {"tools": TOOLS, **(request_ or {})}
    check_parse(lambda: parser(request), text, Expected(*expected))


@pytest.mark.parametrize("request_,reasoning", [({}, "kimi-k3"), ({"tools": TOOLS}, None)])
def test_framing_is_dropped_by_either_parser_alone(request_, reasoning):
    text = f"{RESPONSE}Hi.{END_RESPONSE}{END_MESSAGE}"
    check_parse(lambda: parser({**request_, **OFF}, reasoning=reasoning), text, Expected("Hi."))


@pytest.mark.parametrize("tail,starts_in_reasoning", [
    ('<|open|>message role="assistant"<|sep|><|open|>think<|sep|>', True),
    ('<|open|>message role="assistant"<|sep|><|open|>response<|sep|>', False),
])
def test_the_prompt_tail_decides_where_the_reply_starts(tail, starts_in_reasoning):
    prompt = f"<|open|>think<|sep|>old<|close|>think<|sep|>{END_MESSAGE}{tail}"
    m = parser({"tools": TOOLS}, prompt=prompt).parse_complete(f"x{END_RESPONSE}")
    assert (m.reasoning_content, m.content) == (("x", None) if starts_in_reasoning else (None, "x"))


def test_a_length_stop_inside_a_marker_drops_the_cut_markup():
    text = THINK_END + KIMI_K3.open + WEATHER + "<|close|>tools"
    m = parser().parse_complete(text)
    assert (m.content, [(t.function.name, t.function.arguments) for t in m.tool_calls]) == (
        None, [("get_weather", '{"city": "Oslo"}')])


def test_string_value_streams_as_it_grows():
    p = parser()
    head = THINK_END + KIMI_K3.open + '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="s" type="string"<|sep|>'
    seen = []
    for chunk in (head, "Par", 'is "F', "R", "<|close|>arg", "ument<|sep|>"):
        for delta, _ in p.stream_chunk(chunk):
            for tc in delta.tool_calls or ():
                seen.append(tc.function.arguments or "")
        seen.append("|")
    steps = "".join(seen).split("|")
    assert steps[0].endswith('{"s": "') and steps[1:5] == ["Par", 'is \\"F', "R", ""]
    assert steps[5] == '"'


# ---- the official template --------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")
ASSISTANT = '<|open|>message role="assistant"<|sep|>'
SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, None, {"k": "v"}, [], {}]}})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "escaped_keys_and_closer_like_strings": [("f", {'k"&<x>': "<|open|>argument<|sep|>", "n": None, "b": False})],
}


def render(messages, **variables):
    from .test_xml_templates import load_template

    return load_template("templates/Kimi-K3.jinja").render(messages=messages, tools=TOOLS, **variables)


@pytest.mark.parametrize("thinking", [True, False])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario, thinking):
    calls = SCENARIOS[scenario]
    assistant = {"role": "assistant", "content": "Let me check.", "reasoning_content": "The user wants weather.",
                 "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                                for i, (n, a) in enumerate(calls)]}
    messages = [{"role": "user", "content": "Weather in Paris?"}, assistant]
    full = render(messages, thinking=thinking)
    prompt = render(messages[:1], thinking=thinking, add_generation_prompt=True)
    opener = "<|open|>think<|sep|>" if thinking else RESPONSE
    assert prompt.endswith(ASSISTANT + opener)
    reply = full[full.rindex(ASSISTANT) + len(ASSISTANT) + len(opener):]
    request = {"tools": TOOLS, "chat_template_kwargs": {"thinking": thinking}}
    content, reasoning, got = check_parse(lambda: parser(request, prompt=prompt), reply)
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert (content, reasoning) == ("Let me check.", "The user wants weather." if thinking else None)
    wire = ToolParserManager.get("kimi-k3").render([(n, json.dumps(a)) for n, a in calls])
    assert wire in reply  # render writes what the template writes


def test_template_json_form_round_trips():
    assistant = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": [1, {"b": "x&\\"y"}]}'}}]}
    full = render([{"role": "user", "content": "go"}, assistant], thinking=False)
    reply = full[full.rindex(ASSISTANT) + len(ASSISTANT):]
    assert '<|open|>json type="object"<|sep|>' in reply
    got = check_parse(lambda: parser({"tools": TOOLS, **OFF}), reply)[2]
    assert got == [("f", '{"a": [1, {"b": "x&\\"y"}]}')]


def test_reasoning_render_is_what_the_template_writes():
    written = ReasoningParserManager.get("kimi-k3").render("Paris, then.")
    assert written == "<|open|>think<|sep|>Paris, then.<|close|>think<|sep|>"
    full = render([{"role": "user", "content": "x"},
                   {"role": "assistant", "content": "y", "reasoning_content": "Paris, then."}], thinking=True)
    assert written + RESPONSE in full


# ---- hypothesis: attribute escapes and closer-like strings round trip --------------------------

HAZARDS = ['"', "&", "&amp;", "&quot;", "<", ">", "\n", "<|sep|>", "<|open|>", "<|close|>", "<|close|>call<|sep|>",
           "<|close|>tools<|sep|>", "\\", "{", "}"]
text_st = st.lists(st.sampled_from(HAZARDS) | st.text(max_size=3), max_size=6).map("".join)
strings = text_st.filter(lambda s: "<|close|>argument<|sep|>" not in s)  # the known ambiguity (PROTOCOLS.md)
keys = text_st
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) \
    | strings
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(text_st, kids, max_size=3),
                      max_leaves=6)
names = st.sampled_from(["f", "g", 'q"&uot', "a&amp;b"])
calls_st = st.lists(st.tuples(names, st.dictionaries(keys, values, max_size=3)), min_size=1, max_size=3)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"), max_size=20)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_st, prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    rendered = ToolParserManager.get("kimi-k3").render([(n, json.dumps(a)) for n, a in calls])
    assert rendered == KIMI_K3.block(*((n, json.dumps(a)) for n, a in calls))
    text = f"{reasoning}{THINK_END}{RESPONSE}{content}{END_RESPONSE}{rendered}{END_MESSAGE}"
    request = {"tools": [{"type": "function", "function": {"name": n}} for n in {n for n, _ in calls}]}
    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    assert decoded(result_of(parser(request).parse_complete(text))) == want
    check_chunkings(lambda: parser(request), text, want, (list(text), random_chunks(text, random.Random(seed), 9)),
                    decoded)


# ---- issue 13 variants: spaced markers, cut markers ---------------------------------------------

def spaced(text: str) -> str:
    """``text`` as vLLM's detokenizer writes it with ``spaces_between_special_tokens``: a space
    inside every marker (between ``<|open|>`` / ``<|close|>`` and the tag, before ``<|sep|>``)
    and between two markers."""
    for bracket in ("<|open|>", "<|close|>"):
        text = text.replace(bracket, bracket + " ")
    return text.replace("<|sep|>", " <|sep|>").replace("|><|", "|> <|")


SPACED_CALL = call("get_weather", xtml_argument("city", "Oslo"), xtml_argument("days", 3))
SPACED = [
    ("tools_block", f"{THINK_END}{RESPONSE}Hi.{END_RESPONSE}{tools(SPACED_CALL)}{END_MESSAGE}", None,
     ("Hi.", None, [("get_weather", '{"city": "Oslo", "days": 3}')])),
    ("think_closer", f"hmm{THINK_END}{RESPONSE}Hi.{END_RESPONSE}{END_MESSAGE}", None, ("Hi.", "hmm", [])),
    ("think_closer_skipped", f"hmm{RESPONSE}Hi.{END_RESPONSE}{END_MESSAGE}", None, ("Hi.", "hmm", [])),
    ("thinking_off", f"Hi.{END_RESPONSE}{tools(SPACED_CALL)}{END_MESSAGE}", OFF,
     ("Hi.", None, [("get_weather", '{"city": "Oslo", "days": 3}')])),
    ("json_form", THINK_END + tools(call("f", '<|open|>json type="object"<|sep|>{"a": 1}<|close|>json<|sep|>')), None,
     (None, None, [("f", '{"a": 1}')])),
]


@pytest.mark.parametrize("text,request_,expected", [c[1:] for c in SPACED], ids=[c[0] for c in SPACED])
def test_spaces_inside_markers_are_layout(text, request_, expected):
    request = {"tools": TOOLS, **(request_ or {})}
    check_parse(lambda: parser(request), spaced(text), Expected(*expected))


def test_spaces_inside_markers_without_tools():
    check_parse(lambda: parser({**OFF}), spaced(f"Hi.{END_RESPONSE}{END_MESSAGE}"), Expected("Hi."))


CUT_INSIDE = [
    ("call_opener", '<|open|>call tool="get_weather" index="2"', []),
    ("call_opener_bare", "<|open|>call", []),
    ("argument_opener", '<|open|>call tool="f" index="2"<|sep|><|open|>argument key="a" type="str', [("f", "{}")]),
    ("call_closer", "<|close|>call", []),
    ("tools_closer_spaced", "<|close|> tools", []),
]


@pytest.mark.parametrize("cut,more", [c[1:] for c in CUT_INSIDE], ids=[c[0] for c in CUT_INSIDE])
def test_a_length_stop_inside_an_element_leaks_no_markup(cut, more):
    text = THINK_END + KIMI_K3.open + WEATHER + cut
    got = check_parse(parser, text)
    assert got == (None, None, [("get_weather", '{"city": "Oslo"}'), *more])


@pytest.mark.parametrize("cut", ["<|open|>", "<|open|>tool", "<|open|> to"])
def test_a_length_stop_after_a_cut_opener_releases_it_as_content(cut):
    """The space before ``<|open|>`` is held while it may begin the spaced opener
    `` <|open|> tools <|sep|>``, and the cut opener while it may become one; no opener
    completed, so ``final`` releases both as text (issue 23 rule 3: test_robustness_rules)."""
    text = f"{THINK_END}ok {cut}"
    p = parser()
    message = p.parse_complete(text)
    assert (message.content, p.dropped) == (f"ok {cut}", [])
    check_parse(parser, text, Expected(f"ok {cut}"))


def test_a_length_stop_inside_a_value_closer_leaks_no_markup():
    text = THINK_END + KIMI_K3.open + call("f", xtml_argument("a", "v"))[:-len("<|close|>call<|sep|>")].replace(
        "<|close|>argument<|sep|>", "<|close|>argument")
    assert check_parse(parser, text) == (None, None, [("f", '{"a": "v"}')])


def spaced_block(calls) -> str:
    """The tools block with every marker spaced (values as the template writes them)."""
    parts = [spaced(KIMI_K3.open)]
    for i, (name, arguments) in enumerate(calls, 1):
        parts.append(spaced(f'<|open|>call tool="{xtml_attribute(name)}" index="{i}"<|sep|>'))
        for key, value in arguments.items():
            head, _, rest = xtml_argument(key, value).partition("<|sep|>")
            body = rest[:-len("<|close|>argument<|sep|>")]
            parts.append(spaced(head + "<|sep|>") + body + spaced("<|close|>argument<|sep|>"))
        parts.append(spaced("<|close|>call<|sep|>"))
    return " ".join(parts) + " " + spaced(KIMI_K3.close)


plain_values = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"),
                       min_size=1, max_size=8).filter(lambda s: s == s.strip()) | st.integers(-99, 99) | st.booleans()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(names, st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), plain_values,
                                                 max_size=3)), min_size=1, max_size=3), st.integers(0, 1000))
def test_spaced_markers_round_trip(calls, seed):
    text = spaced(f"{THINK_END}{RESPONSE}Hi.{END_RESPONSE}") + " " + spaced_block(calls) + " " + spaced(END_MESSAGE)
    request = {"tools": [{"type": "function", "function": {"name": n}} for n in {n for n, _ in calls}]}
    want = ("Hi.", None, [(n, a) for n, a in calls])
    assert decoded(result_of(parser(request).parse_complete(text))) == want
    check_chunkings(lambda: parser(request), text, want, (list(text), random_chunks(text, random.Random(seed), 9)),
                    decoded)
