"""Literal calls: ``OPEN HEAD NAME ARGUMENTS CLOSE``, one call per block, the name right after a head.

Gemma 4 writes ``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>``; a declarative
response template (``lmparse.tools.template_calls``) writes the same shape with its own
opener, head, name characters and string delimiters.  Both are these drivers with other data:

* ``call_heads``: what may precede the name (the first is the one ``render`` writes);
* ``name_chars``: the name's characters (the name ends at the first other character, which
  must open the arguments);
* ``grammar``: the arguments' object-literal syntax (``value_grammar.ValueGrammar``),
  translated to JSON as it streams (a string as it grows, a bare scalar at its terminator);
  ``paren_grammar`` the same inside ``NAME(...)`` (None: not accepted).

``JsonCallParser`` reads plain JSON arguments instead, forwarded as scanned.  The call ends
with its arguments; the block's close tag is the driver's (``ToolParser._consume_close``).
"""

from __future__ import annotations

from typing import ClassVar, Final

import json
import re

from .base import MORE, PAYLOAD_CLOSED, Events, Payload, PayloadStep, ToolParser
from .json_arguments import JsonArguments
from .value_grammar import GEMMA_LITERAL, LiteralTranslator, ValueGrammar, render_literal
from .._mypyc import mypyc_attr

__all__ = ["LiteralCallParser", "JsonCallParser", "NAME_CHARS"]

NAME_CHARS: Final = re.compile(r"[^{}()<>\s,:]*")  # characters of a function name
_MAX_NAME: Final = 256  # longer is prose, not a name: a bound on what is held
_HEAD: Final = 0
_ARGS: Final = 1
_SKIP: Final = 2
_SKIP_LIMIT: Final = 1024  # how far past a break the block's close tag makes the rest of it markup
_BROKEN: Final = "malformed: the arguments broke off; the rest of the block is its markup"


@mypyc_attr(allow_interpreted_subclasses=True)
class LiteralCallParser(ToolParser):
    """``OPEN HEAD NAME{literal}CLOSE``: the head, the name, then the literal (see the module)."""

    summary = "OPEN HEAD NAME{key:value,…} CLOSE (an object literal)"
    streaming = "arguments: a string value as it grows; a bare scalar at its terminator"
    call_heads: ClassVar[tuple[str, ...]] = ("call:",)
    name_chars: ClassVar[re.Pattern[str]] = NAME_CHARS
    grammar: ClassVar[ValueGrammar] = GEMMA_LITERAL
    paren_grammar: ClassVar[ValueGrammar | None] = None

    def _reset_payload(self) -> None:
        self._phase = _HEAD
        self._literal = LiteralTranslator(self.grammar)

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos = 0
        if self._phase == _SKIP:
            return self._skip_to_close(text, events, final)
        if self._phase == _HEAD:
            pos, status = self._consume_head(text, events)
            if status is not MORE or self._phase == _HEAD:
                return pos, status
        return self._consume_arguments(text, pos, events, final)

    def _consume_head(self, text: str, events: Events) -> PayloadStep:
        """``HEAD NAME`` up to the arguments' opening: the call's name (the phase moves on),
        or ``MORE`` while it is arriving."""
        lead = next((head for head in self.call_heads if text.startswith(head)), None)
        if lead is None:
            first = self.call_heads[0]
            if len(text) < len(first) and first.startswith(text):
                return 0, MORE
            return 0, self._reject(events)
        end = self.name_chars.match(text, len(lead)).end()  # type: ignore[union-attr]
        paren = end < len(text) and text[end] == "(" and self.paren_grammar is not None
        if end - len(lead) > _MAX_NAME or (end < len(text) and (text[end] != "{" and not paren or end == len(lead))):
            return 0, self._reject(events)
        if end == len(text):
            return 0, MORE
        if paren:
            self._literal = LiteralTranslator(self.paren_grammar)  # type: ignore[arg-type]
        self._begin_call()
        self._emit_name(events, text[len(lead):end])
        self._phase = _ARGS
        return end, MORE

    def _consume_arguments(self, text: str, pos: int, events: Events, final: bool) -> PayloadStep:
        """The named call's arguments from ``pos``: the call ends with them."""
        literal = self._literal
        pos = literal.feed(text, pos, final)
        self._calls.arguments(events, literal.writer.take())
        if literal.done:
            self._end_call(events)
            return pos, PAYLOAD_CLOSED
        if literal.broken:
            # After the name: the call ends with what it had, closed as JSON, and the block's
            # text up to its close tag is markup (``dropped``), never content.
            literal.close_broken()
            self._calls.arguments(events, literal.writer.take())
            self._end_call(events)
            self._phase = _SKIP
            rest = self._skip_to_close(text[pos:], events, final)
            return pos + rest[0], rest[1]
        return pos, MORE

    def _skip_to_close(self, text: str, events: Events, final: bool) -> PayloadStep:
        """The rest of a broken call's block: up to the close tag, found within
        ``_SKIP_LIMIT``, a ``dropped`` record; else nothing (the text is the reply's)."""
        close = self.tool_close_tag
        found = text.find(close, 0, _SKIP_LIMIT + len(close)) if close else -1
        if found == -1 and not final and len(text) < _SKIP_LIMIT + len(close or ""):
            return 0, MORE  # wait for the close tag (held by the router)
        if found > 0:
            self._cut(events, text[:found], _BROKEN)
        return max(found, 0), PAYLOAD_CLOSED

    @classmethod
    def write_arguments(cls, arguments: str) -> str:
        """JSON arguments as the call writes them."""
        return render_literal(json.loads(arguments), cls.grammar)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "".join(f"{cls.tool_open_tags[0]}{cls.call_heads[0]}{name}{cls.write_arguments(args)}"
                       f"{cls.tool_close_tag or ''}" for name, args in calls)


@mypyc_attr(allow_interpreted_subclasses=True)
class JsonCallParser(LiteralCallParser):
    """``OPEN HEAD NAME{json}CLOSE``: JSON arguments after the name, forwarded as scanned."""

    summary = "OPEN HEAD NAME {json} CLOSE"
    streaming = "arguments: the JSON source text as soon as it is lexically stable"

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._arguments = JsonArguments(self._calls)

    def _consume_arguments(self, text: str, pos: int, events: Events, final: bool) -> PayloadStep:
        arguments = self._arguments
        pos = arguments.consume(text, pos, events, final)
        scanner = arguments.scanner
        if scanner.broken:
            arguments.flush(events, complete=False)
            return pos, self._reject(events)  # after the name: the call ends with what it had
        if scanner.done:
            arguments.flush(events)
            self._end_call(events)
            return pos, PAYLOAD_CLOSED
        return pos, MORE

    def _finish_payload(self, events: Events) -> Payload:
        self._arguments.flush(events, complete=False)  # cut off: a held scalar as written
        return super()._finish_payload(events)

    @classmethod
    def write_arguments(cls, arguments: str) -> str:
        return arguments
