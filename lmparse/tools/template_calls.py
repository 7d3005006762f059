"""Tool dialects built from a declarative template's ``tool_calls`` region (``lmparse.response.template``).

Each is a small parameterized subclass of the shared machinery, so a template's calls stream
like a hand-written dialect's (identity first, argument text as it arrives):

* ``json`` with a literal opener: ``{"name": ..., "arguments": {...}}`` envelopes
  (``JsonToolParser``; Qwen3's ``<tool_call>``);
* ``json`` whose opener captures the name (``<|tool_call>call:(?P<name>\\w+)``) with
  ``unquoted_keys`` and one ``string_delims`` pair: an object literal (``LiteralCallParser``,
  the machinery Gemma 4's ``{k:<|"|>v<|"|>}`` calls run on);
* ``json`` whose opener captures the name, plain JSON arguments: forwarded as scanned
  (``JsonCallParser``);
* ``xml-inline`` whose opener captures the name and whose ``tag_pattern`` is
  ``OPEN(?P<key>..)END\\s*(?P<value>.*?)\\s*CLOSE`` (``XmlToolParser``; Qwen3.5's ``<parameter=K>``);
* ``python-call-list`` between literal markers (``PythonicToolParser``).
"""

from __future__ import annotations

import re
from typing import Any

from .base import ToolParser
from .dialects._syntax import arg_start_hook, function_hook, read_until
from .dialects.pythonic import PythonicToolParser
from .json_envelope import JsonToolParser
from .literal_call import JsonCallParser, LiteralCallParser
from .value_grammar import ValueGrammar
from .xml import ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser

__all__ = ["envelope_parser", "literal_call_parser", "named_json_parser", "xml_call_parser", "python_list_parser"]


class TemplateLiteralCallParser(LiteralCallParser):
    """``OPEN HEAD NAME{literal}CLOSE``: the head and the name's characters come from the
    template's opener, the literal's string delimiters from ``content_args.string_delims``;
    only the template's close tag closes a call."""

    summary = "a template's OPEN NAME{key:value} CLOSE object literal"


class TemplateNamedJsonParser(JsonCallParser):
    """``OPEN HEAD NAME{json}CLOSE``: JSON arguments after a captured name, forwarded as scanned."""

    summary = "a template's OPEN NAME {json} CLOSE"


class TemplateXmlToolParser(XmlToolParser):
    """``OPEN FUNCTION NAME NAME_END (PARAM KEY KEY_END value VALUE_CLOSE)* FUNCTION_CLOSE CLOSE``."""

    function_open = ""
    name_end = ">"
    key_end = ">"
    value_newlines = True  # one newline on each side of a value is formatting (qwen3coder's rule)
    summary = "a template's xml-inline parameters"

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        return function_hook(payload, pos, self.function_open, self._read_name)

    def _read_name(self, payload: str, pos: int) -> Found[tuple[str, int]]:
        return read_until(payload, pos, self.name_end)

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, self.parameter_open, self.function_close, self.tool_close_tag or "")

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = read_until(payload, pos + len(self.parameter_open), self.key_end)
        if not found:
            return found
        return found[1], found[0].strip()


def _subclass(base: type[ToolParser], name: str, attrs: dict[str, Any]) -> type[ToolParser]:
    # A response_template says nothing of the whitespace a chat template writes around calls:
    # whitespace between two calls is their separator, whitespace before the first is content.
    return type(name, (base,), {"tool_close_prefixes": (), "template_markers": (), "block_lead": "",
                                "block_separator": None, **attrs})


def envelope_parser(open_tags: tuple[str, ...], close: str | None) -> type[ToolParser]:
    return _subclass(JsonToolParser, "TemplateJsonToolParser", {
        "tool_open_tags": open_tags, "tool_close_tag": close,
        "summary": f'{open_tags[0]}{{"name": NAME, "arguments": {{...}}}}{close or ""} (response_template)'})


def literal_call_parser(open_tag: str, head: str, name_pattern: str, grammar: ValueGrammar,
                        close: str | None) -> type[ToolParser]:
    return _subclass(TemplateLiteralCallParser, "TemplateLiteralCallParser", {
        "tool_open_tags": (open_tag,), "tool_close_tag": close, "call_heads": (head,),
        "name_chars": re.compile(f"(?:{name_pattern})?"), "grammar": grammar})


def named_json_parser(open_tag: str, head: str, name_pattern: str, close: str | None) -> type[ToolParser]:
    return _subclass(TemplateNamedJsonParser, "TemplateNamedJsonParser", {
        "tool_open_tags": (open_tag,), "tool_close_tag": close, "call_heads": (head,),
        "name_chars": re.compile(f"(?:{name_pattern})?")})


def xml_call_parser(open_tag: str, function_open: str, name_end: str, parameter_open: str, key_end: str,
                    value_close: str, function_close: str, close: str | None) -> type[ToolParser]:
    return _subclass(TemplateXmlToolParser, "TemplateXmlToolParser", {
        "tool_open_tags": (open_tag,), "tool_close_tag": close, "function_open": function_open,
        "name_end": name_end, "parameter_open": parameter_open, "key_end": key_end,
        "arg_value_close": value_close, "function_close": function_close})


def python_list_parser(open_tag: str, close: str | None) -> type[ToolParser]:
    return _subclass(PythonicToolParser, "TemplatePythonicToolParser", {
        "tool_open_tags": (open_tag,), "tool_close_tag": close, "bare_start": False})
