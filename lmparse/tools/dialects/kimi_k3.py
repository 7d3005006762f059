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
tokens and a chunk may end after ``<|open|>`` / ``<|close|>`` + a tag name.  Servers should
keep special tokens and not put spaces between them.

Variants accepted:

* vLLM's detokenizer with ``spaces_between_special_tokens`` writes a space on each side of
  every special token: ``<|open|> response <|sep|>``.  The spaced tools opener, framing and
  think closer (a space before them too) are markers of their own; inside a block opened by
  the spaced opener, spaces inside an element's markers and between two elements are layout
  (``_squeeze``).  Spaces between a marker and a value or the content are kept: they may be
  the text's own.
* A length stop can cut a marker after ``<|open|>`` / ``<|close|>`` + a tag name, before its
  ``<|sep|>`` (SGLang strips those): inside a block, such a tail at the end of the reply is
  the block's markup, not argument text (``_cut_tail``), where the parser was holding it.  In
  a raw value, text that cannot begin the value's closer was argument text as it came (the
  template does not escape values); in the content or reasoning the router decides: text.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any, Final

from ..base import OPEN as STEP_OPEN, BlockStep, Events
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser
from ._syntax import at_partial
from ..._mypyc import mypyc_attr

OPEN: Final = "<|open|>"
CLOSE: Final = "<|close|>"
SEP: Final = "<|sep|>"
END_OF_MSG: Final = "<|end_of_msg|>"
TOOLS: Final = f"{OPEN}tools{SEP}"
END_TOOLS: Final = f"{CLOSE}tools{SEP}"
CALL: Final = f"{OPEN}call"
END_CALL: Final = f"{CLOSE}call{SEP}"
ARGUMENT: Final = f"{OPEN}argument"
END_ARGUMENT: Final = f"{CLOSE}argument{SEP}"
JSON_FORM: Final = f"{OPEN}json"
END_JSON_FORM: Final = f"{CLOSE}json{SEP}"
# The message's framing around the content and after the tools (dropped from the content).
RESPONSE: Final = f"{OPEN}response{SEP}"
END_RESPONSE: Final = f"{CLOSE}response{SEP}"
END_MESSAGE: Final = f"{CLOSE}message{SEP}"


def spaced(marker: str) -> str:
    """``marker`` as a detokenizer with ``spaces_between_special_tokens`` writes it."""
    for bracket in (OPEN, CLOSE):
        marker = marker.replace(bracket, bracket + " ")
    return marker.replace(SEP, " " + SEP).replace("|><|", "|> <|")


def spaced_variants(*markers: str) -> tuple[str, ...]:
    """Each marker spaced, alone and after the space that joins it to what precedes it."""
    return tuple(v for m in markers for v in (spaced(m), " " + spaced(m)))


SPACED_TOOLS: Final = spaced(TOOLS)
FRAMING: Final = (RESPONSE, END_RESPONSE, END_MESSAGE, END_OF_MSG,
           *spaced_variants(RESPONSE, END_RESPONSE, END_MESSAGE), " " + END_OF_MSG)
# Spaces inside a marker or between two markers: layout (in a block opened by ``SPACED_TOOLS``).
# (A run at the end, or before a marker that has only begun to arrive, is removed tentatively.)
_SPACES: Final = re.compile(r"(?<=<\|open\|>)[ \t]+|(?<=<\|close\|>)[ \t]+"
                     r"|(?<=<\|sep\|>)[ \t]+(?=<\|(?:open|close)\|>|(?P<t1><[|a-z]{0,7})\Z)"
                     r"|[ \t]+(?=<\|sep\|>|(?P<t2>(?:<[|a-z]{0,7})?)\Z)")
# At the start of a block, the space between its opener and the first element.
_LEAD: Final = re.compile(r"[ \t]+(?=<\|(?:open|close)\|>|(?P<t1>(?:<[|a-z]{0,7})?)\Z)")
# An element marker cut off by the end of the reply before its ``<|sep|>``: a bracket, a tag
# name, attributes (the last maybe open), maybe a partial ``<|sep|>``; or a partial bracket.
_CUT_TAIL: Final = re.compile(
    r'(?:<\|(?:open|close)\|>[ \t]*(?:[A-Za-z_][\w-]*(?:[ \t]+[A-Za-z_][\w-]*(?:="[^"]*"?|=)?)*'
    r'[ \t]*)?(?:<(?:\|(?:s(?:ep?)?\|?)?)?)?|<\|(?:o(?:p(?:en?)?)?|c(?:l(?:o(?:se?)?)?)?)?\|?)\Z')
_ATTRIBUTE: Final = re.compile(r'\s*([A-Za-z_][\w-]*)="')  # up to the value's opening quote
_ATTRIBUTE_HEAD: Final = re.compile(r'\s*(?:[A-Za-z_][\w-]*=?)?')  # a partial one
_MAX_ATTRIBUTES: Final = 4096  # characters of attributes: longer is not a tag


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


@mypyc_attr(allow_interpreted_subclasses=True)
class KimiK3ToolParser(XmlToolParser):
    summary = '<|open|>tools<|sep|><|open|>call tool="N" index="1"<|sep|><|open|>argument key="K" type="T"<|sep|>V…'
    tool_open_tags = (TOOLS, SPACED_TOOLS, " " + SPACED_TOOLS)
    template_markers = (TOOLS, END_TOOLS, ARGUMENT, END_ARGUMENT, END_CALL)  # the template writes no spaced form
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

    def start_block(self, open_tag: str) -> None:
        super().start_block(open_tag)
        self._spaced = open_tag.lstrip(" ") == SPACED_TOOLS
        self._lead = True  # what was consumed of the block ends at its opener or a ``<|sep|>``

    def feed_tool_block(self, text: str, events: Events, final: bool = False) -> BlockStep:
        if final and _cut_tail(text) < len(text):
            # A marker cut off by the end: the text goes in as a chunk first, so the parser
            # holds what it would hold mid-stream; what it holds is then the markup dropped.
            step = self._feed(text, events, False)
            if step.status != STEP_OPEN:
                return step
            rest = text[step.consumed:]
            cut = _cut_tail(rest)
            last = self._feed(rest[:cut], events, True)
            return last._replace(consumed=len(text) if last.consumed == cut else step.consumed + last.consumed)
        return self._feed(text, events, final)

    def _feed(self, text: str, events: Events, final: bool) -> BlockStep:
        """``feed_tool_block`` on the text without its layout spaces, when the block opened spaced."""
        if not self._spaced:
            return super().feed_tool_block(text, events, final)
        body, removed = _squeeze(text, self._lead)
        step = super().feed_tool_block(body, events, final)
        if final and step.consumed == len(body):
            return step._replace(consumed=len(text))
        at = bisect_right(removed, (step.consumed, len(text)))
        consumed = step.consumed + (removed[at - 1][1] if at else 0)
        if consumed:
            self._lead = text.endswith(SEP, 0, consumed)
        return step._replace(consumed=consumed)

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


def _squeeze(text: str, lead: bool) -> tuple[str, list[tuple[int, int]]]:
    """``text`` without the layout spaces of ``_SPACES`` (and ``_LEAD`` at its start when
    ``lead``: it follows a marker), and where they were: ``(position in the result, spaces removed up to there)``,
    ascending; a tentative run counts from the position after it, so a parser that stops
    before its marker leaves it unconsumed."""
    parts: list[str] = []
    removed: list[tuple[int, int]] = []
    last = gone = 0
    first = _LEAD.match(text) if lead else None
    for match in ([first] if first else []) + list(_SPACES.finditer(text, first.end() if first else 0)):
        parts.append(text[last:match.start()])
        gone += match.end() - match.start()
        tentative = any(match.groupdict(None).get(t) is not None for t in ("t1", "t2"))
        removed.append((match.end() - gone + tentative, gone))
        last = match.end()
    if not removed:
        return text, removed
    parts.append(text[last:])
    return "".join(parts), removed


def _cut_tail(text: str) -> int:
    """Where a marker cut off at the end of ``text`` begins (``len(text)``: none)."""
    for at in (max(text.rfind(OPEN), text.rfind(CLOSE)), text.rfind("<|", max(0, len(text) - len(CLOSE)))):
        if at >= 0 and _CUT_TAIL.match(text, at):
            return at
    return len(text)


def _xtml_type(value: Any) -> str:
    """The ``type`` attribute the template writes for a JSON value."""
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "object" if isinstance(value, dict) else "array"
