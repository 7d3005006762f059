"""Kimi-K3 ("XTML"): ``<|open|>TAG ATTR="V"<|sep|>`` ... ``<|close|>TAG<|sep|>`` elements.

Wire syntax (``Kimi-K3.jinja``), no whitespace between elements::

    <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="K" type="string"<|sep|>raw text<|close|>argument<|sep|>
    <|open|>argument key="N" type="number"<|sep|>3<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>

(shown on four lines).  ``type`` is ``string`` (the body is raw text, streamed as it grows)
or ``number | boolean | null | object | array`` (the body is JSON: containers forwarded
as they come, scalars at their close tag).  Attribute values are escaped ``&`` -> ``&amp;``
then ``"`` -> ``&quot;``; nothing else is escaped anywhere.  The template's second argument
form, ``<|open|>json type="object"<|sep|>{...}<|close|>json<|sep|>``, carries the whole
arguments object as JSON (vLLM and SGLang drop it; it is read here).  ``index`` is the
1-based position in the message and carries nothing the parser needs.

Built on ``XmlToolParser`` (``tools/xml.py``): its driver runs the values, with the
``"arguments"`` declaration added for the json form; the hooks here only read elements.
The assistant message's own framing (the ``response`` element around the content, the
message closer and ``<|end_of_msg|>``) is dropped from the content by the router
(``framing_markers``), with or without the ``kimi-k3`` reasoning parser.

Tokens (unverified, no Kimi-K3 tokenizer here): ``<|open|>``, ``<|close|>``, ``<|sep|>`` and
``<|end_of_msg|>`` are special tokens and tag names ordinary text, so a marker is several
tokens and a chunk may end after ``<|open|>`` / ``<|close|>`` + a tag name.  Servers must
keep special tokens and not put spaces between them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...registry import ToolParserManager
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser
from ._syntax import at_partial

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
END_OF_MSG = "<|end_of_msg|>"
TOOLS, END_TOOLS = f"{OPEN}tools{SEP}", f"{CLOSE}tools{SEP}"
CALL, END_CALL = f"{OPEN}call", f"{CLOSE}call{SEP}"
ARGUMENT, END_ARGUMENT = f"{OPEN}argument", f"{CLOSE}argument{SEP}"
JSON_FORM, END_JSON_FORM = f"{OPEN}json", f"{CLOSE}json{SEP}"
# The message's framing around the content and after the tools (dropped from the content).
RESPONSE, END_RESPONSE = f"{OPEN}response{SEP}", f"{CLOSE}response{SEP}"
END_MESSAGE = f"{CLOSE}message{SEP}"
FRAMING = (RESPONSE, END_RESPONSE, END_MESSAGE, END_OF_MSG)
_ATTRIBUTE = re.compile(r'\s*([A-Za-z_][\w-]*)="')  # up to the value's opening quote
_ATTRIBUTE_HEAD = re.compile(r'\s*(?:[A-Za-z_][\w-]*=?)?')  # a partial one
_MAX_ATTRIBUTES = 4096  # characters of attributes: longer is not a tag


def escape_attribute(value: str) -> str:
    """An attribute value as the template writes it."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


def unescape_attribute(value: str) -> str:
    return value.replace("&quot;", '"').replace("&amp;", "&")


def read_attributes(text: str, pos: int) -> Found[tuple[dict[str, str], int]]:
    """`` a="x" b="y"<|sep|>`` after a tag name: ``(decoded attributes, index after <|sep|>)``,
    None while it is arriving, MALFORMED if it is not that (or runs past ``_MAX_ATTRIBUTES``).
    A value holds anything but a raw ``"`` (the template escapes it), ``<`` and newlines too."""
    attributes: dict[str, str] = {}
    start, n = pos, len(text)
    while True:
        if pos - start > _MAX_ATTRIBUTES:
            return MALFORMED
        if text.startswith(SEP, pos):
            return attributes, pos + len(SEP)
        match = _ATTRIBUTE.match(text, pos)
        if match is None:
            rest = text[pos:]
            if at_partial(text, pos, SEP) or _ATTRIBUTE_HEAD.fullmatch(rest):
                return None
            return MALFORMED  # another tag that starts like this one, or not XTML
        end = text.find('"', match.end())
        if end == -1:
            return None if n - start <= _MAX_ATTRIBUTES else MALFORMED
        attributes[match.group(1)] = unescape_attribute(text[match.end():end])
        pos = end + 1


def _read_name(text: str, pos: int) -> Found[tuple[str, int]]:
    found = read_attributes(text, pos)
    if not found:
        return found
    name = found[0].get("tool", "")
    return (name, found[1]) if name.strip() else MALFORMED


@ToolParserManager.register_module("kimi-k3")
class KimiK3ToolParser(XmlToolParser):
    summary = '<|open|>tools<|sep|><|open|>call tool="N" index="1"<|sep|><|open|>argument key="K" type="T"<|sep|>V…'
    tool_open_tags = (TOOLS,)
    tool_close_tag = END_TOOLS
    tool_close_prefixes = (f"{CLOSE}tools", CLOSE)  # unverified (tag names are ordinary text)
    arg_value_close = END_ARGUMENT
    arg_value_close_prefixes = (f"{CLOSE}argument", CLOSE)  # unverified
    arguments_close = END_JSON_FORM
    framing_markers = FRAMING
    # The call syntax constraints are built from (lmparse.tools.syntax); XGrammar has no
    # XTML style, so lmparse.constrain writes the parameters as GBNF (non-strings typed ``number``:
    # the parser reads any non-string type as JSON).
    argument_style = "kimi_xtml"
    parameter_open = ARGUMENT
    function_close = END_CALL

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        if payload.startswith(CALL, pos):
            found = _read_name(payload, pos + len(CALL))
            if not found:
                return found
            return found[1], found[0], "arg_start"
        if pos == len(payload) or at_partial(payload, pos, CALL):
            return None
        return pos, None, "done"  # the block's close tag (or not XTML: the close decides)

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        for opener in (ARGUMENT, JSON_FORM):
            if payload.startswith(opener, pos):
                return pos, "arg_name"
        if payload.startswith(END_CALL, pos):
            return pos + len(END_CALL), "done"
        if payload.startswith(END_TOOLS, pos):
            return pos, "done"  # the call's closer never came: the block's ends it
        if pos == len(payload) or at_partial(payload, pos, ARGUMENT, JSON_FORM, END_CALL, END_TOOLS):
            return None
        return MALFORMED

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        if payload.startswith(JSON_FORM, pos):
            found = read_attributes(payload, pos + len(JSON_FORM))
            return (found[1], "", "arguments") if found else found
        found = read_attributes(payload, pos + len(ARGUMENT))
        if not found:
            return found
        attributes, end = found
        if "key" not in attributes:
            return MALFORMED
        return end, attributes["key"], "string" if attributes.get("type", "string") == "string" else "json"

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        if not calls:
            return ""
        out = [TOOLS]
        for index, (name, arguments) in enumerate(calls, 1):
            out.append(f'{CALL} tool="{escape_attribute(name)}" index="{index}"{SEP}')
            for key, value in json.loads(arguments).items():
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                kind = _xtml_type(value)
                out.append(f'{ARGUMENT} key="{escape_attribute(key)}" type="{kind}"{SEP}{text}{END_ARGUMENT}')
            out.append(END_CALL)
        out.append(END_TOOLS)
        return "".join(out)


def _xtml_type(value: Any) -> str:
    """The ``type`` attribute the template writes for a JSON value."""
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "object" if isinstance(value, dict) else "array"
