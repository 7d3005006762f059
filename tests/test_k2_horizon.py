"""K2 Horizon (IFM): the ``k2-horizon`` tool and reasoning parsers.

The DESIGN §7 case table runs through tests/test_contract.py (``K2_HORIZON`` in ALL_WIRES, markers
as pseudo-tokens).  Here: the three request-chosen call syntaxes, typed values, the effort tags,
and cases written after vLLM's tests/tool_parsers/test_k2_horizon_tool_parser.py (its tools;
expected values written by hand).  Every case goes through the shared stream validator.
"""

from __future__ import annotations

from typing import Any

import pytest

from .support.stream import Expected
from .support.wires import K2_HORIZON

TOOLS = [
    {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {
        "query": {"type": "string"}, "limit": {"type": "integer"}, "enabled": {"type": "boolean"},
        "tags": {"type": ["array", "string"]}, "loose": {}}}}},
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
]
PLAIN = "</ifm|think>"  # the prompt opens reasoning: a reply reaches content by closing it


def request(fmt: str | None = None, **kwargs: Any) -> dict[str, Any]:
    template = {**({"tool_call_format": fmt} if fmt else {}), **kwargs}
    return {"tools": TOOLS, **({"chat_template_kwargs": template} if template else {})}


def group(*calls: str) -> str:
    return "<ifm|tool_calls>" + "\n".join(calls) + "</ifm|tool_calls>"


def check(text: str, expected: Expected, req: dict[str, Any] | None = None) -> None:
    K2_HORIZON.check(text, expected, req if req is not None else request())


def test_the_rendered_example_from_protocols():
    text = ("The user asks about Paris.</ifm|think><ifm|tool_calls>\n<ifm|tool_call>lookup\n<ifm|arg_key>query"
            "</ifm|arg_key>\n<ifm|arg_value>Paris</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>")
    check(text, Expected(None, "The user asks about Paris.", [("lookup", '{"query": "Paris"}')]))


def test_xml_default_several_calls_typed_by_the_schema():  # vLLM: xml default, multiple calls, coerced
    text = PLAIN + "Before " + group(
        "<ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>123</ifm|arg_value>"
        "<ifm|arg_key>limit</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>",
        "<ifm|tool_call>ping</ifm|tool_call>") + " after."
    check(text, Expected("Before  after.", None, [("lookup", '{"query": "123", "limit": 3}'), ("ping", "{}")]))


def test_xml_typed_values():  # vLLM: xml_typed request override
    text = PLAIN + group(
        "<ifm|tool_call>lookup\n<ifm|arg_key>query</ifm|arg_key>\n<ifm|arg_type>string</ifm|arg_type>\n"
        "<ifm|arg_value>weather</ifm|arg_value>\n<ifm|arg_key>limit</ifm|arg_key>\n"
        "<ifm|arg_type>integer</ifm|arg_type>\n<ifm|arg_value>2</ifm|arg_value>\n</ifm|tool_call>")
    check(text, Expected(None, None, [("lookup", '{"query": "weather", "limit": 2}')]), request("xml_typed"))


def test_a_written_type_picks_one_of_a_union_and_types_a_value_without_schema():
    pair = "<ifm|arg_key>{}</ifm|arg_key><ifm|arg_type>{}</ifm|arg_type><ifm|arg_value>{}</ifm|arg_value>"
    text = PLAIN + group("<ifm|tool_call>lookup" + pair.format("tags", "array[string]", '["a", "b"]')
                         + pair.format("loose", "any", " 7 ") + pair.format("x", "number", " 1.5")
                         + "</ifm|tool_call>")
    check(text, Expected(None, None, [("lookup", '{"tags": ["a", "b"], "loose": " 7 ", "x": 1.5}')]),
          request("xml_typed"))
    as_string = PLAIN + group("<ifm|tool_call>lookup" + pair.format("tags", "string", '["a"]') + "</ifm|tool_call>")
    check(as_string, Expected(None, None, [("lookup", '{"tags": "[\\"a\\"]"}')]), request("xml_typed"))


def test_json_calls_are_converted_by_the_schema():  # vLLM: json override, "2" -> 2, "true" -> true
    text = PLAIN + group('<ifm|tool_call>{"name": "lookup", "arguments": {"limit": "2", "enabled": "true", '
                         '"query": 5}}</ifm|tool_call>', '<ifm|tool_call>{"name": "ping"}</ifm|tool_call>')
    check(text, Expected(None, None, [("lookup", '{"limit": 2, "enabled": true, "query": "5"}'), ("ping", "{}")]),
          request("json"))


@pytest.mark.parametrize(("fmt", "call"), [
    (None, '<ifm|tool_call>{"name": "ping", "arguments": {}}</ifm|tool_call>'),
    ("json", "<ifm|tool_call>ping</ifm|tool_call>"),
])
def test_a_call_in_another_syntax_than_the_requested_one_is_text(fmt, call):  # vLLM: mismatched formats
    text = PLAIN + group(call)
    check(text, Expected(group(call), None, []), request(fmt))


def test_a_type_tag_the_request_did_not_ask_for_ends_the_call():
    # vLLM fails the whole group closed; here the call was named before the tag came, so it
    # keeps what it had, and the rest of the call, up to its close tag, is a dropped record
    # (block-level recovery), not text.
    text = PLAIN + group("<ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_type>string"
                         "</ifm|arg_type><ifm|arg_value>x</ifm|arg_value></ifm|tool_call>")
    check(text, Expected(None, None, [("lookup", "{}")]))


def test_junk_in_a_group_is_text():  # vLLM: malformed input is content
    check(PLAIN + group("junk"), Expected(group("junk"), None, []))


def test_an_unknown_tool_is_dropped():
    text = PLAIN + group("<ifm|tool_call>missing</ifm|tool_call>")
    check(text, Expected(None, None, []))


@pytest.mark.parametrize(("effort", "tag"), [("high", "think"), ("medium", "think_fast"), ("low", "think_faster")])
def test_the_reasoning_tags_follow_the_effort(effort, tag):
    text = f"<ifm|{tag}>plan</ifm|{tag}>answer"
    check(text, Expected("answer", "plan", []), request(reasoning_effort=effort))


def test_a_literal_think_tag_in_reasoning_is_text():
    check("a </think> b</ifm|think>ok", Expected("ok", "a </think> b", []))


def test_thinking_off_starts_as_content():
    check("hello", Expected("hello", None, []), request(enable_thinking=False))
