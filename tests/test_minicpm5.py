"""MiniCPM5 (``minicpm5`` tool and reasoning parsers).

The DESIGN §7 case table runs through tests/test_contract.py (``MINICPM5`` in ALL_WIRES; no
MiniCPM5 tokenizer exists here, so arbitrary chunkings only).  Here: CDATA values (a close
tag inside is data), Python-printed non-strings typed by the schema, the newline before a
call, reasoning's start from the switch or the prompt, round trips through the official
template and hypothesis round trips with CDATA-hostile strings.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected, check_chunkings, check_parse, decoded, random_chunks, result_of
from .support.wires import MINICPM5, TOOLS

TYPED = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "opts": {"type": "object"}, "ok": {"type": "boolean"},
    "n": {"type": ["number", "null"]}, "tags": {"type": "array"}}}}},
    {"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "g"}}]


def parser(request=None, prompt=None):
    return create_parser(tool_parser="minicpm5", reasoning_parser="minicpm5", prompt=prompt,
                         request={"tools": TYPED} if request is None else request)


def function(name: str, body: str = "") -> str:
    return f'<function name="{name}">{body}</function>'


def param(key: str, raw: str) -> str:
    return f'<param name="{key}">{raw}</param>'


# ---- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw,value", [
    ("<![CDATA[a </param> b]]>", "a </param> b"),
    ("<![CDATA[line\none & <x>]]>", "line\none & <x>"),
    ("<![CDATA[]]>", ""),
    ("plain", "plain"),
    ("<![CDATA", "<![CDATA"),  # not the whole wrapper: raw text
])
def test_cdata_is_stripped_and_its_body_is_data(raw, value):
    got = check_parse(parser, function("f", param("s", raw)))[2]
    assert got == [("f", json.dumps({"s": value}))]


def test_python_printed_values_are_typed_by_the_schema():
    body = (param("city", "3") + param("days", "3") + param("opts", "{'unit': 'c', 'x': None}") + param("ok", "True")
            + param("n", "None") + param("tags", "['a', 1]"))
    got = check_parse(parser, function("get_weather", body))[2]
    assert [(n, json.loads(a)) for n, a in got] == [("get_weather", {
        "city": "3", "days": 3, "opts": {"unit": "c", "x": None}, "ok": True, "n": None, "tags": ["a", 1]})]


def test_single_quoted_name_attributes():
    assert check_parse(parser, "<function name='f'><param name='a'>1</param></function>")[2] == [("f", '{"a": "1"}')]


def test_the_newline_before_a_call_is_its_syntax_and_later_text_is_content():
    text = "Let me check.\n" + function("f") + "\n" + function("g", param("a", "x")) + "\nDone."
    check_parse(lambda: parser({"tools": TYPED, "chat_template_kwargs": {"enable_thinking": False}}), text,
                Expected("Let me check.\nDone.", None, [("f", "{}"), ("g", '{"a": "x"}')]))


def test_a_missing_function_close_ends_at_the_next_function():
    text = function("f", param("a", "1")).removesuffix("</function>") + "\n" + function("g")
    assert check_parse(parser, "</think>" + text)[2] == [("f", '{"a": "1"}'), ("g", "{}")]


def test_prose_mentioning_the_tag_stays_text():
    text = "Use <function name= to call."
    check_parse(lambda: parser({"tools": TYPED}), text, Expected(text))


def test_string_value_streams_as_it_grows_inside_cdata():
    p = parser({"tools": TYPED})
    seen = []
    for chunk in ('<function name="f"><param name="s"><![CDATA[', "a <", "/param> b]", "]", ">", "</param>"):
        for delta, _ in p.stream_chunk(chunk):
            for tc in delta.tool_calls or ():
                seen.append(tc.function.arguments or "")
        seen.append("|")
    steps = "".join(seen).split("|")
    assert steps[0].endswith('{"s": "')
    assert steps[1:6] == ["a <", "/param> b", "", "", '"']  # ``]`` / ``]]`` may open the wrapper's end: held


# ---- reasoning: the switch or the prompt ----------------------------------------------------------

@pytest.mark.parametrize("kwargs,prompt_tail,starts", [
    ({"enable_thinking": True}, "<|im_start|>assistant\n<think>\n", True),
    ({"enable_thinking": False}, "<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
    ({}, "<|im_start|>assistant\n", False),  # no switch: the model decides
])
def test_initial_mode(kwargs, prompt_tail, starts):
    request = {"tools": TYPED, "chat_template_kwargs": kwargs}
    want = (None, "x") if starts else ("x", None)
    for prompt in (None, "<|im_start|>user\nhi<|im_end|>\n" + prompt_tail):
        m = parser(request, prompt=prompt).parse_complete("x")
        assert (m.content, m.reasoning_content) == want
    m = parser({"tools": TYPED}, prompt="<|im_start|>assistant\n").parse_complete("<think>r</think>c")
    assert (m.reasoning_content, m.content) == ("r", "c")


# ---- the official template ------------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")
SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c"}, "ok": False,
                                      "n": None, "tags": ["a", 2]})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "closers_inside_cdata": [("get_weather", {"city": "a</param>b</function>\n<function name=\"g\">"})],
}


def render(messages, **variables):
    from .test_xml_templates import load_template

    return load_template("templates/openbmb-MiniCPM5-1B.jinja").render(messages=messages, tools=TYPED, **variables)


@pytest.mark.parametrize("content", ["Let me check.", ""])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario, content):
    calls = SCENARIOS[scenario]
    assistant = {"role": "assistant", "content": content, "reasoning_content": "The user wants weather.",
                 "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                                for i, (n, a) in enumerate(calls)]}
    messages = [{"role": "user", "content": "Weather in Paris?"}, assistant]
    prompt = render(messages[:1], add_generation_prompt=True, enable_thinking=True)
    assert prompt.endswith("<|im_start|>assistant\n<think>\n")
    full = render(messages, enable_thinking=True)
    reply = full[full.rindex("<|im_start|>assistant\n<think>\n") + len("<|im_start|>assistant\n<think>\n"):]
    reply = reply.split("<|im_end|>")[0]
    request = {"tools": TYPED, "chat_template_kwargs": {"enable_thinking": True}}
    got_content, reasoning, got = check_parse(lambda: parser(request, prompt=prompt), reply)
    assert [(name, json.loads(arguments)) for name, arguments in got] == calls
    assert reasoning.strip() == "The user wants weather."
    assert (got_content or "").strip() == content  # the template writes "\n\n" after </think>
    assert ToolParserManager.get("minicpm5").render([(n, json.dumps(a)) for n, a in calls]) in reply


# ---- hypothesis: CDATA-hostile strings round trip --------------------------------------------------

HAZARDS = ["<", "&", "\n", "</param>", "</function>", "<function name=\"f\">", "<![CDATA[", "]]", "]", ">", '"', "'",
           "<think>", "</think>", "\\"]
# Excluded: "]]>" (no CDATA can hold it), a raw value that looks like a CDATA opener, and a value
# that is itself a JSON string literal (``""``): every XML-like dialect reads a quoted value as
# the string it quotes (convert_value), so the wire cannot tell the two apart.
strings = st.lists(st.sampled_from(HAZARDS) | st.text(max_size=3), max_size=6).map("".join).filter(
    lambda s: "]]>" not in s and not (s.startswith("<![CDATA[") and not any(c in s for c in "<&\n"))
    and not s.strip().startswith('"'))
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
calls_st = st.lists(st.tuples(st.sampled_from(["f", "g"]), st.dictionaries(keys, strings, max_size=3)), min_size=1,
                    max_size=3)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"), max_size=20)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_st, prose, st.integers(0, 1000))
def test_render_round_trip(calls, content, seed):
    rendered = ToolParserManager.get("minicpm5").render([(n, json.dumps(a)) for n, a in calls])
    assert rendered == MINICPM5.calls(*((n, json.dumps(a)) for n, a in calls))
    text = f"r</think>{content}\n{rendered}" if content else f"r</think>{rendered}"
    request = {"tools": TOOLS, "chat_template_kwargs": {"enable_thinking": True}}
    want = (content or None, "r", [(n, a) for n, a in calls])
    assert decoded(result_of(parser(request).parse_complete(text))) == want
    check_chunkings(lambda: parser(request), text, want, (list(text), random_chunks(text, random.Random(seed), 9)),
                    decoded)


# ---- issue 13 variants ---------------------------------------------------------------------------

COLLAPSED = [
    ("collapsed_function_and_param", '<functionname="f"><paramname="a">1</param></function>', [("f", '{"a": "1"}')]),
    ("collapsed_after_content", 'Hi.\n<functionname="f"><paramname="a"><![CDATA[x<y]]></param></function>',
     [("f", '{"a": "x<y"}')]),
    ("collapsed_single_quoted", "<functionname='f'><paramname='a'>1</param><param name='b'>2</param></function>",
     [("f", '{"a": "1", "b": "2"}')]),
    ("collapsed_two_calls", '<functionname="f"></function>\n<functionname="g"><paramname="a">x</param></function>',
     [("f", "{}"), ("g", '{"a": "x"}')]),
    ("collapsed_missing_close_ends_at_the_next", '<functionname="f"><paramname="a">x</param>'
     '<functionname="g"></function>', [("f", '{"a": "x"}'), ("g", "{}")]),
]


@pytest.mark.parametrize("text,calls", [v[1:] for v in COLLAPSED], ids=[v[0] for v in COLLAPSED])
def test_collapsed_tags_parse_like_the_templates(text, calls):
    content = "Hi." if text.startswith("Hi.") else None
    check_parse(parser, text, Expected(content, None, calls))


def test_prose_mentioning_the_collapsed_tag_stays_text():
    check_parse(parser, "Write <functionname= to call.", Expected("Write <functionname= to call."))
