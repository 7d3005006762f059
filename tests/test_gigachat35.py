"""GigaChat 3.5 (``gigachat35``): DSML's grammar under ``｜GCML｜`` and ``<think>`` behind a switch.

The DESIGN §7 case table runs through tests/test_contract.py (``GIGACHAT35`` in ALL_WIRES).  Here:
the cases of vLLM's own tests (tests/tool_parsers/test_gigachat35_tool_parser.py and
tests/reasoning/test_gigachat35_reasoning_parser.py, vllm-project/vllm main), written afresh with
hand-written expectations, and where lmparse differs on purpose.
"""

from __future__ import annotations

import json

import pytest

from lmparse import ToolParserManager, create_parser

from .support.stream import Expected
from .support.wires import GIGACHAT35 as W

START, END = "<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"
NAMES = ("get_weather", "get_time", "typed_args", "empty_args", "escaped", "store", "lookup", "broken")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}} for n in NAMES]
ON = {"tools": TOOLS, "chat_template_kwargs": {"reasoning": True}}
OFF = {"tools": TOOLS}


def param(key: str, value: str, string: bool | None = True) -> str:
    flag = "" if string is None else f' string="{str(string).lower()}"'
    return f'<｜GCML｜parameter name="{key}"{flag}>{value}</｜GCML｜parameter>'


def invoke(name: str, *params: str) -> str:
    return f'<｜GCML｜invoke name="{name}">{"".join(params)}</｜GCML｜invoke>'


def block(*invokes: str) -> str:
    return START + "".join(invokes) + END


# ---- vLLM's tool parser cases (reasoning off: its default) ------------------------------------

PEER_TOOL_CASES = {
    "no_tool_calls": ("Plain answer without a tool call.", Expected("Plain answer without a tool call.")),
    "single": (block(invoke("get_weather", param("city", "Tokyo"))), Expected(None, None, [("get_weather", '{"city": "Tokyo"}')])),
    "parallel": (block(invoke("get_weather", param("city", "Tokyo")), invoke("get_time", param("timezone", "Asia/Tokyo"))),
                 Expected(None, None, [("get_weather", '{"city": "Tokyo"}'), ("get_time", '{"timezone": "Asia/Tokyo"}')])),
    "various_types": (block(invoke("typed_args", param("string_field", '"hello"', False), param("int_field", "7", False),
                                   param("float_field", "3.5", False), param("bool_field", "true", False),
                                   param("null_field", "null", False), param("array_field", "[1, 2, 3]", False),
                                   param("object_field", '{"nested": true}', False))),
                      Expected(None, None, [("typed_args", '{"string_field": "hello", "int_field": 7, "float_field": 3.5, '
                                                           '"bool_field": true, "null_field": null, "array_field": [1, 2, 3], '
                                                           '"object_field": {"nested": true}}')])),
    "empty_arguments": (block(invoke("empty_args")), Expected(None, None, [("empty_args", "{}")])),
    "surrounding_text": ("I will check." + block(invoke("get_weather", param("city", "Tokyo"))),
                         Expected("I will check.", None, [("get_weather", '{"city": "Tokyo"}')])),
    # The value is the 18 characters ``line 1\n"quoted"`` with a real backslash: raw text, JSON-escaped.
    "escaped_strings": (block(invoke("escaped", param("text", 'line 1\\n"quoted"'))),
                        Expected(None, None, [("escaped", '{"text": "line 1\\\\n\\"quoted\\""}')])),
    "aliases_lookup": (block(invoke("lookup", param("query", "vLLM"))), Expected(None, None, [("lookup", '{"query": "vLLM"}')])),
    "string_false_object": (block(invoke("store", param("payload", '{"a": 1}', False))),
                            Expected(None, None, [("store", '{"payload": {"a": 1}}')])),
    # vLLM's malformed inputs: a block with no invoke, and an empty block, are content there and here.
    "malformed_parameter_without_invoke": (START + param("x", "1", None), Expected(START + param("x", "1", None))),
    "malformed_empty_block": (START + END, Expected(START + END)),
}


@pytest.mark.parametrize("case", PEER_TOOL_CASES, ids=list(PEER_TOOL_CASES))
def test_vllm_tool_cases(case):
    text, expected = PEER_TOOL_CASES[case]
    W.check(text, expected, OFF)


def test_vllm_malformed_open_invoke_differs_on_purpose():
    """vLLM returns ``<tool_calls><invoke name="broken">`` (no closers) as content; lmparse's
    truncation rule keeps a call whose name was read, its arguments closed as ``{}``."""
    W.check(START + '<｜GCML｜invoke name="broken">', Expected(None, None, [("broken", "{}")]), OFF)


def test_a_parameter_without_string_is_raw_text_even_when_it_looks_like_json():
    """vLLM's gigachat35: a missing ``string`` counts as true (DSML V4 would try JSON / the schema)."""
    text = block(invoke("store", param("n", "7", None), param("o", '{"a": 1}', None)))
    W.check(text, Expected(None, None, [("store", '{"n": "7", "o": "{\\"a\\": 1}"}')]), OFF)


def test_newlines_between_elements_are_layout_and_a_block_without_closer_ends_with_the_reply():
    text = f'Ok\n\n{START}\n<｜GCML｜invoke name="get_weather">\n{param("city", "Москва")}\n</｜GCML｜invoke>\n'
    W.check(text, Expected("Ok", None, [("get_weather", '{"city": "Москва"}')]), OFF)


def test_a_value_missing_its_close_tag_ends_at_the_invoke_close():
    text = block('<｜GCML｜invoke name="get_weather"><｜GCML｜parameter name="city" string="true">Paris</｜GCML｜invoke>')
    W.check(text + "after", Expected("after", None, [("get_weather", '{"city": "Paris"}')]), OFF)


# ---- vLLM's reasoning cases (the "Reasoning" checkpoint: its prompt opens <think>) -----------

TOOL_CALL_TAIL = (f'{START}\n<｜GCML｜invoke name="get_weather">\n{param("city", "Москва")}\n'
                  f"</｜GCML｜invoke>\n{END}")


@pytest.mark.parametrize("text,expected", [
    ("The user asks 2+2. Simple arithmetic.</think>\n\nThe answer is 4.",
     Expected("\n\nThe answer is 4.", "The user asks 2+2. Simple arithmetic.")),
    ("The user asks 2+2. Simple arithmetic", Expected(None, "The user asks 2+2. Simple arithmetic")),
    # vLLM's reasoning parser alone leaves the block in the content; with the tool parser it is the call,
    # and the "\n\n" before it is the block's lead.
    ("Need the weather tool.</think>\n\n" + TOOL_CALL_TAIL,
     Expected(None, "Need the weather tool.", [("get_weather", '{"city": "Москва"}')])),
], ids=["forced_open", "truncated_reasoning", "tool_call"])
def test_vllm_reasoning_cases(text, expected):
    W.check(text, expected, ON)


def test_the_prompt_decides_when_given():
    """The Reasoning checkpoint's template always opens ``<think>``: its prompt's tail starts the
    reply in reasoning with no switch in the request."""
    prompt = "user<|role_sep|>\n2+2?<|message_sep|>\n\nassistant<|role_sep|>\n<think>\n"
    message = create_parser(tool_parser="gigachat35", reasoning_parser="gigachat35", request=OFF,
                            prompt=prompt).parse_complete("sum</think>4")
    assert (message.reasoning_content, message.content) == ("sum", "4")


@pytest.mark.parametrize("kwargs,starts_in_reasoning", [
    ({}, False),  # the base template's default: vLLM's identity parser
    ({"reasoning": True}, True),
    ({"reasoning": False}, False),
    ({"enable_thinking": True}, True),  # the usual switches count when ``reasoning`` is absent
    ({"reasoning": False, "enable_thinking": True}, False),  # the family's own switch wins
])
def test_the_reasoning_switch(kwargs, starts_in_reasoning):
    message = create_parser(tool_parser="gigachat35", reasoning_parser="gigachat35",
                            request={"tools": TOOLS, "chat_template_kwargs": kwargs}).parse_complete("The answer is 4.")
    assert (message.reasoning_content, message.content) == (
        ("The answer is 4.", None) if starts_in_reasoning else (None, "The answer is 4."))


def test_render_parses_back():
    calls = [("get_weather", '{"city": "Tokyo", "days": 3}'), ("empty_args", "{}")]
    wire = ToolParserManager.get("gigachat35").render(calls)
    assert wire.startswith(START + "\n") and wire.endswith(END)
    message = create_parser(tool_parser="gigachat35", request=OFF).parse_complete(wire)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": "Tokyo", "days": 3}), ("empty_args", {})]
