"""Gemma 4: ``<|tool_call>call:NAME{ARGS}<tool_call|>``, ARGS a Gemma object literal.

Wire syntax (``google-gemma-4-31B-it.jinja``), parallel calls back to back::

    <|tool_call>call:get_weather{city:<|"|>Paris "FR"<|"|>,days:3}<tool_call|>
    <|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|><|tool_response>

(shown on two lines; the template writes no newline between calls).

ARGS has bare keys, raw strings between ``<|"|>`` delimiters (no escaping: ``"``, ``,``,
``}`` and newlines appear as they are), bare numbers / ``true`` / ``false`` / ``null`` and
nested ``{}`` / ``[]``; ``lmparse.tools.value_grammar`` turns it into JSON as it streams (a
string as it grows, a bare scalar once its terminator arrives).  ``<|tool_response>``
ends generation (llama.cpp stops there; the 31B template writes it after the turn's
content): it opens a block that takes the rest of the reply, recorded in ``dropped``.  Cheap variants accepted (vLLM
``parser/gemma4.py``, ``tool_parsers/gemma4_utils.py``): ``:NAME{`` without ``call``, and
``<turn|>`` in place of ``<tool_call|>``.  No call id or index is written.

Tokenization (``gemma-4/``, tests/test_gemma4.py): ``<|tool_call>`` 48, ``<tool_call|>`` 49,
``<|tool_response>`` 50, ``<|"|>`` 52 and ``<turn|>`` 106 are single special tokens, so a
chunk never ends inside them; servers must keep special tokens (skipping them erases the
string delimiters too).
"""

from __future__ import annotations

import json
import re
from ...registry import ToolParserManager
from ..base import Deltas, ToolParser
from ..syntax import CallSyntax, derive_call_syntax
from ..value_grammar import GEMMA_LITERAL, LiteralTranslator, render_literal
from ._syntax import at_partial

TOOL_CALL = "<|tool_call>"
TOOL_CALL_END = "<tool_call|>"
TOOL_RESPONSE = "<|tool_response>"  # the model's end of generation after its calls
TURN_END = "<turn|>"
PAST_END = "after <|tool_response>: the model wrote past its end of generation"
STRING = '<|"|>'
_CALL, _BARE = "call:", ":"
_NAME = re.compile(r"[^{}()<>\s,:]*")  # characters of a function name
_MAX_NAME = 256  # longer is prose, not a name: a bound on what is held
_HEAD, _ARGS = range(2)


@ToolParserManager.register_module("gemma4")
class Gemma4ToolParser(ToolParser):
    tool_open_tags = (TOOL_CALL, TOOL_RESPONSE)
    tool_close_tag = TOOL_CALL_END
    tool_close_prefixes = ()  # every marker is one special token (gemma-4/)
    summary = '<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3,o:{...}}<tool_call|>…'
    streaming = "arguments: a string value as it grows; a bare scalar at its terminator"
    # What may precede the name (the first is the template's), the name's characters and the
    # arguments' literal syntax: class data, so a declarative template's variant
    # (lmparse.tools.template_calls) is this parser with other values.
    call_heads: tuple[str, ...] = (_CALL, _BARE)
    name_chars: re.Pattern[str] = _NAME
    grammar = GEMMA_LITERAL

    def start_block(self, open_tag: str) -> None:
        super().start_block(open_tag)
        self._past_end: list[str] | None = [] if open_tag == TOOL_RESPONSE else None

    def _reset_payload(self) -> None:
        self._phase = _HEAD
        self._literal = LiteralTranslator(self.grammar)

    def _consume_stream_payload(self, text: str, deltas: Deltas, *, final: bool) -> int:
        if self._past_end is not None:
            return self._consume_past_end(self._past_end, text, final)
        pos = 0
        if self._phase == _HEAD:
            found = self._consume_head(text, deltas)
            if found is None:
                return 0
            pos = found
            if self._rejected:
                return pos
        return self._consume_arguments(text, pos, deltas, final)

    def _consume_arguments(self, text: str, pos: int, deltas: Deltas, final: bool) -> int:
        """The named call's arguments from ``pos``: the new position."""
        literal = self._literal
        pos = literal.feed(text, pos, final)
        self._calls.arguments(deltas, literal.writer.take())
        if literal.done:
            self._end_call(deltas)
            self._payload_closed = True
        elif literal.broken:
            self._reject(deltas)  # after the name: the call ends with what it had
        return pos

    def _consume_head(self, text: str, deltas: Deltas) -> int | None:
        """``call:NAME`` up to its ``{``: the call's name, or None while it is arriving."""
        lead = next((head for head in self.call_heads if text.startswith(head)), None)
        if lead is None:
            if at_partial(text, 0, self.call_heads[0]):
                return None
            self._reject(deltas)
            return 0
        end = self.name_chars.match(text, len(lead)).end()  # type: ignore[union-attr]
        if end - len(lead) > _MAX_NAME or (end < len(text) and (text[end] != "{" or end == len(lead))):
            self._reject(deltas)
            return 0
        if end == len(text):
            return None
        self._begin_call()
        self._emit_name(deltas, text[len(lead):end])
        self._phase = _ARGS
        return end

    def _consume_past_end(self, past_end: list[str], text: str, final: bool) -> int:
        """After ``<|tool_response>`` the model plays the tool: not the reply.  Kept for
        ``dropped`` (one record at the end, if anything came)."""
        self._committed = True
        past_end.append(text)
        if final:
            past = "".join(past_end)
            if past:
                self._calls.cut(past, PAST_END)
            self._payload_closed = True
        return len(text)

    def _consume_close(self, text: str, pos: int, final: bool) -> int:
        if self._past_end is not None:
            self._closed = True
            return pos
        if text.startswith(TURN_END, pos):  # the turn ended where the close tag belonged
            self._closed = True
            return pos + len(TURN_END)
        if not final and at_partial(text, pos, TURN_END, TOOL_CALL_END):
            return pos
        return super()._consume_close(text, pos, final)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "".join(f"{TOOL_CALL}call:{name}{write_arguments(args)}{TOOL_CALL_END}" for name, args in calls)

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """Gemma object-literal arguments (``lmparse.constrain`` spells them with ``gemma`` rules)."""
        return derive_call_syntax(cls, "gemma", write_arguments)


def write_arguments(arguments: str) -> str:
    """JSON arguments as the template writes them (it also sorts keys; the parser does not care)."""
    return render_literal(json.loads(arguments), GEMMA_LITERAL)
