"""Issue 13 item 5: robustness rules that hold for every dialect family, one test per family.

- whitespace around and between calls is content verbatim unless the family's template
  writes it as part of the call syntax (``ToolParser.block_separator`` / ``block_lead``);
- an XML-like value whose own close tag is missing ends at the enclosing function's or
  block's close tag;
- schema type names beyond JSON Schema's (``int``, ``double``, ``dict``...) and unions
  coerce alike wherever a dialect coerces by schema;
- gpt-oss messages to built-in recipients that are not offered are ``dropped``, not reasoning.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .support.stream import Expected
from .support.wires import DSML, DSML_WIRES, XML_WIRES, DsmlWire, Wire, XmlWire, dsml_untyped

SCHEMA_WIRES = (*XML_WIRES, *DSML_WIRES)  # the families that coerce values by the tool's schema


def value_close(w: Wire) -> str:
    """The tag that closes one argument value on ``w``'s wire."""
    if isinstance(w, DsmlWire):
        return f"</{DSML}parameter>"
    return "</arg_value>" if w.tool_parser.startswith(("glm", "ling")) else "</parameter>"


def one_call(w: Wire, name: str, params: list[tuple[str, str]]) -> str:
    if isinstance(w, DsmlWire):
        return w.call_with(name, *(dsml_untyped(k, v) for k, v in params))
    assert isinstance(w, XmlWire)
    return w.call(name, params)


# ---- an XML value whose own close tag is missing --------------------------------------------

WEATHER = [("city", "Paris"), ("days", "3")]
WEATHER_ARGS = '{"city": "Paris", "days": 3}'


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_the_function_close(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    close = value_close(w)
    cut = call.rindex(close)
    broken = call[:cut] + call[cut + len(close):].removeprefix("\n")
    w.check(w.plain + broken + "after" + w.call("g", ()) if isinstance(w, XmlWire) else w.plain + broken + "after",
            Expected("after", None, [("get_weather", WEATHER_ARGS)] + ([("g", "{}")] if isinstance(w, XmlWire) else [])))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_the_block_close(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    broken = call[:call.rindex(value_close(w))] + w.close
    w.check(w.plain + broken + "after", Expected("after", None, [("get_weather", WEATHER_ARGS)]))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_value_missing_its_close_tag_ends_at_a_block_close_on_its_own_line(w: Wire) -> None:
    call = one_call(w, "get_weather", WEATHER)
    broken = call[:call.rindex(value_close(w))] + "\n" + w.close  # Ling 3's function close is "\n</tool_call>"
    w.check(w.plain + broken + "after", Expected("after", None, [("get_weather", WEATHER_ARGS)]))


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_block_close_inside_a_value_is_data_when_the_value_closes_later(w: Wire) -> None:
    value = f"x {w.close} y"
    w.check(w.plain + one_call(w, "f", [("s", value)]), Expected(None, None, [("f", json.dumps({"s": value}, ensure_ascii=False))]))


# ---- schema type names ------------------------------------------------------------------------

KINDS: dict[str, Any] = {
    "i": {"type": "int"}, "integer": {"type": "integer"}, "f": {"type": "float"}, "d": {"type": "double"},
    "number": {"type": "number"}, "b": {"type": "bool"}, "boolean": {"type": "boolean"},
    "s": {"type": "str"}, "string": {"type": "string"}, "o": {"type": "dict"}, "object": {"type": "object"},
    "l": {"type": "list"}, "array": {"type": "array"}, "u": {"type": ["int", "null"]},
    "un": {"type": ["integer", "null"]}, "v": {"anyOf": [{"type": "null"}, {"type": "double"}]},
}
WRITTEN = {"i": "3", "integer": "4", "f": "2.5", "d": "-1.25", "number": "7", "b": "true", "boolean": "False",
           "s": "12", "string": "true", "o": '{"a": 1}', "object": "{'k': [1]}", "l": "[1, 2]", "array": '["x"]',
           "u": "5", "un": "None", "v": "0.5"}
COERCED = {"i": 3, "integer": 4, "f": 2.5, "d": -1.25, "number": 7, "b": True, "boolean": False, "s": "12",
           "string": "true", "o": {"a": 1}, "object": {"k": [1]}, "l": [1, 2], "array": ["x"], "u": 5, "un": None,
           "v": 0.5}
KIND_TOOLS = [{"type": "function", "function": {"name": "kinds", "parameters": {"type": "object", "properties": KINDS}}}]


@pytest.mark.parametrize("w", SCHEMA_WIRES, ids=lambda w: w.id)
def test_schema_type_names_beyond_json_schemas_coerce_alike(w: Wire) -> None:
    text = w.plain + one_call(w, "kinds", list(WRITTEN.items()))
    w.check(text, Expected(None, None, [("kinds", json.dumps(COERCED, ensure_ascii=False))]), w.request(tools=KIND_TOOLS))
