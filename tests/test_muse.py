"""Muse Spark / Muse Glimmer (``muse``, ATEM): hand-written replies from PROTOCOLS.md's ``muse`` section.

The DESIGN §7 case table runs through tests/test_contract.py (``MUSE`` in ALL_WIRES, the special
tokens as pseudo-tokens: no Muse vocabulary is here).  Here: a whole turn with reasoning, an
answer and two tool messages; values typed only by the schema; ATEM markup in reasoning or
content bodies; malformed and cut-off calls; the official template's layout.
"""

from __future__ import annotations

import json

import pytest

from lmparse import create_parser
from lmparse.tools.dialects.muse import MuseToolParser

from .support.stream import Expected, check_parse
from .support import tokenizers
from .support.wires import MUSE, pseudo_tokens

NEXT = "<|eom|><|start|>assistant"  # between two messages of one turn
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "zip": {"type": "string"},
        "opts": {"type": "object"}, "metric": {"type": "boolean"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]


def parser(tools=TOOLS):
    return create_parser(tool_parser="muse", reasoning_parser="muse", request={"tools": tools})


def check(text: str, expected: Expected):
    return check_parse(parser, text, expected, {"pseudo-tokens": pseudo_tokens(text, MUSE.pseudo_token_markers)})


def weather(body: str, name: str = "get_weather", recipient: str | None = None) -> str:
    return (f' to={recipient or name}<|message|><atem:function_calls>\n<atem:invoke name="{name}">\n{body}'
            "</atem:invoke>\n</atem:function_calls>")


PARIS = '<atem:parameter name="city">Paris</atem:parameter>\n<atem:parameter name="days">3</atem:parameter>\n'


def test_reasoning_answer_and_two_calls():
    text = (" to=self<|message|>Need two calls.<|eom|><|start|>assistant to=user<|message|>Checking now."
            + NEXT + weather(PARIS) + NEXT
            + ' to=get_time<|message|><atem:function_calls>\n<atem:invoke name="get_time">\n</atem:invoke>\n'
              "</atem:function_calls><|eot|>")
    check(text, Expected("Checking now.", "Need two calls.",
                         [("get_weather", '{"city": "Paris", "days": 3}'), ("get_time", "{}")]))


def test_the_templates_history_turn_parses_back():
    """PROTOCOLS.md's rendering of a history turn (reasoning, two calls; raw quotes, ``&`` and ``<x>``)."""
    text = (' to=self<|message|>Need two calls.<|eom|><|start|>assistant to=get_weather<|message|>'
            '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
            '<atem:parameter name="city">Paris "FR" & <x></atem:parameter>\n'
            '<atem:parameter name="days">3</atem:parameter>\n'
            '<atem:parameter name="opts">{"unit": "c"}</atem:parameter>\n</atem:invoke>\n</atem:function_calls>'
            '<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n'
            '<atem:invoke name="get_weather">\n<atem:parameter name="city">Rome</atem:parameter>\n</atem:invoke>\n'
            '</atem:function_calls><|eot|>')
    check(text, Expected(None, "Need two calls.", [
        ("get_weather", '{"city": "Paris \\"FR\\" & <x>", "days": 3, "opts": {"unit": "c"}}'),
        ("get_weather", '{"city": "Rome"}')]))


def test_string_parameters_stay_strings_and_only_the_schema_types_a_value():
    body = ('<atem:parameter name="zip">12345</atem:parameter>\n<atem:parameter name="days">4</atem:parameter>\n'
            '<atem:parameter name="metric">true</atem:parameter>\n<atem:parameter name="note">42</atem:parameter>\n'
            '<atem:parameter name="city">New\nYork </atem:parameter>\n')
    check(weather(body), Expected(None, None, [
        ("get_weather", '{"zip": "12345", "days": 4, "metric": true, "note": "42", "city": "New\\nYork "}')]))


def test_atem_markup_in_reasoning_or_content_is_text():
    block = '<atem:function_calls>\n<atem:invoke name="get_time">\n</atem:invoke>\n</atem:function_calls>'
    text = f" to=self<|message|>maybe {block}<|eom|><|start|>assistant to=user<|message|>write {block}<|eot|>"
    check(text, Expected(f"write {block}", f"maybe {block}"))


def test_prose_to_is_not_a_header():
    text = " to=self<|message|>set x to=5 then go to= the end<|eom|><|start|>assistant to=user<|message|>ok to=5.<|eot|>"
    check(text, Expected("ok to=5.", "set x to=5 then go to= the end"))


def test_a_reasoning_message_without_eom_ends_at_the_call_header():
    text = " to=self<|message|>no args needed" + weather("", "get_time") + "<|eom|><|start|>assistant to=user<|message|>done"
    check(text, Expected("done", "no args needed", [("get_time", "{}")]))


def test_a_doubled_namespace_name_binds_to_the_offered_tool():
    text = weather(PARIS, "get_weather.get_weather")
    check(text, Expected(None, None, [("get_weather", '{"city": "Paris", "days": 3}')]))


def test_an_unknown_tool_is_dropped_and_the_next_call_keeps_index_zero():
    text = weather('<atem:parameter name="q">x</atem:parameter>\n', "launch") + NEXT + weather(PARIS)
    check(text, Expected(None, None, [("get_weather", '{"city": "Paris", "days": 3}')]))
    p = parser()
    message = p.parse_complete(text)
    assert [d.name for d in p.dropped] == ["launch"]
    assert message.tool_calls[0].function.name == "get_weather"


def test_a_call_cut_after_its_header_is_dropped_with_its_markup():
    text = " to=user<|message|>Checking." + NEXT + " to=get_weather<|message|><atem:function_ca"
    check(text, Expected("Checking."))
    p = parser()
    p.parse_complete(text)
    assert [d.text for d in p.dropped] == [" to=get_weather<|message|><atem:function_ca"]


def test_a_call_cut_inside_a_value_keeps_what_streamed():
    text = weather(PARIS)[: weather(PARIS).index("Paris") + 3]
    check(text, Expected(None, None, [("get_weather", '{"city": "Par"}')]))


def test_a_malformed_body_after_a_call_keeps_the_call():
    body = '<atem:parameter name="city">Oslo</atem:parameter>\n<junk/>\n'
    check(weather(body), Expected(None, None, [("get_weather", '{"city": "Oslo"}')]))


def test_without_tools_the_call_stays_text():
    text = " to=user<|message|>Hi" + NEXT + weather(PARIS)
    p = create_parser(tool_parser="muse", reasoning_parser="muse", request={})
    message = p.parse_complete(text)
    assert message.tool_calls == [] and message.content.startswith("Hi to=get_weather") and "</atem:invoke>" in message.content


def test_render_is_the_official_templates_layout():
    jinja2 = pytest.importorskip("jinja2")
    root = tokenizers.testdata_dir()
    path = None if root is None else root / "templates" / "muse-glimmer.jinja"
    if path is None or not path.is_file():
        pytest.skip("muse-glimmer.jinja is not in the test data")
    calls = [("get_weather", {"city": "Paris", "days": 3, "opts": {"unit": "c"}, "tags": [1, "a"], "metric": True,
                              "z": None}), ("get_time", {})]
    message = {"role": "assistant", "reasoning_content": "R", "tool_calls": [
        {"id": str(i), "type": "function", "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]}
    rendered = jinja2.Environment().from_string(path.read_text()).render(
        messages=[{"role": "user", "content": "hi"}, message], bos_token="")
    turn = rendered[rendered.index("<|start|>user<|message|>hi<|eot|>") + len("<|start|>user<|message|>hi<|eot|>"):]
    want = (" to=self<|message|>R<|eom|><|start|>assistant"
            + MuseToolParser.render([(n, json.dumps(a)) for n, a in calls]) + "<|eot|>")
    assert turn == "<|start|>assistant" + want
    assert '<atem:parameter name="tags">[1, "a"]</atem:parameter>\n<atem:parameter name="metric">true' in turn
