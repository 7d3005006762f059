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
content): it opens a block that takes the rest of the reply, recorded in ``dropped``.

Variants accepted (vLLM ``parser/gemma4.py``, ``tool_parsers/gemma4_utils.py``,
``reasoning/gemma4_utils.py``):

* ``:NAME{`` without ``call``; ``call:NAME(k:v,...)`` with parentheses (the same literal
  inside; a bare scalar there also ends at ``)``);
* ``<turn|>`` in place of ``<tool_call|>``; ``<eos>`` in place of ``<|tool_response>``, but
  only once the reply holds a call (before that an ``<eos>`` is left as text);
* ``thought`` + newline at the very start of the reply (the channel label written with
  thinking off and no ``<|channel>``): recorded in ``dropped``, not content.  Only the exact
  label, only there; ``I thought`` or ``thoughtful`` stay content;
* a bare ``call:NAME{...}`` or ``<call>NAME{...}`` with no markers (vLLM's non-strict
  fallback) is a call only when it cannot be prose: it starts the reply (after optional
  whitespace), NAME is a tool the request offers, the literal is complete and nothing but
  whitespace follows it to the end of the reply.  Anything else (text before or after it,
  an unknown name, no tools offered, a broken or cut-off literal) is text, because prose
  that explains the syntax looks the same; so such a call is held and emitted whole at the
  end of the reply.  These two need a tool parser: with tools off the label stays content.

The call itself (head, name, literal) is the shared literal-call machinery
(``lmparse.tools.literal_call``), which declarative templates use too; this module adds
Gemma's variants: the label, the bare call, the past-end block and ``<turn|>``.

The reasoning parser covers the channel's edge cases (an extra empty channel after the
content, a stray trailing ``<channel|>``, a doubled ``<|channel><|channel>``).  No call id
or index is written.

Tokenization (``gemma-4/``, tests/test_gemma4.py): ``<|tool_call>`` 48, ``<tool_call|>`` 49,
``<|tool_response>`` 50, ``<|"|>`` 52, ``<turn|>`` 106 and ``<eos>`` 1 are single special
tokens, so a chunk never ends inside them; servers must keep special tokens (skipping them
erases the string delimiters too).
"""

from __future__ import annotations

from typing import Final

from ..base import MORE, PAYLOAD_CLOSED, Events, PayloadStep
from ..literal_call import NAME_CHARS, LiteralCallParser
from ..syntax import CallSyntax, derive_call_syntax
from ..value_grammar import GEMMA_LITERAL, GEMMA_PAREN_LITERAL
from ._syntax import at_partial, skip_ws
from ..._mypyc import mypyc_attr

TOOL_CALL: Final = "<|tool_call>"
TOOL_CALL_END: Final = "<tool_call|>"
TOOL_RESPONSE: Final = "<|tool_response>"  # the model's end of generation after its calls
TURN_END: Final = "<turn|>"
EOS: Final = "<eos>"  # end of generation; after calls, the model's other way to end its turn
PAST_END: Final = "after <|tool_response>: the model wrote past its end of generation"
STRING: Final = '<|"|>'
LABEL: Final = "thought\n"  # the reasoning channel's label
LABEL_DROPPED: Final = "a channel label at the start of the reply, with no channel opened"
_CALL: Final = "call:"
_BARE: Final = ":"
_BARE_HEADS: Final = ("call:", "<call>")  # a call with no markers (only as the whole reply)
_MAX_NAME: Final = 256  # longer is prose, not a name: a bound on what is held
_MAX_TRAILING: Final = 256  # whitespace after a bare call held before the end of the reply
_BARE_HEAD: Final = 0  # where a bare call stands
_BARE_ARGS: Final = 1
_BARE_AFTER: Final = 2


@mypyc_attr(allow_interpreted_subclasses=True)
class Gemma4ToolParser(LiteralCallParser):
    tool_open_tags = (TOOL_CALL, TOOL_RESPONSE, EOS)
    template_markers = (TOOL_CALL, TOOL_CALL_END, TOOL_RESPONSE)  # the templates write no ``<eos>``
    # A reply's first characters: the spurious label, or a bare call (see the module docstring).
    bare_start = True
    bare_start_chars = "tc<"
    tool_close_tag = TOOL_CALL_END
    tool_close_prefixes = ()  # every marker is one special token (gemma-4/)
    # So a decoding with spaces between special tokens parses alike (``lmparse.tools.spaced``):
    # ``<|tool_call> call:f{a: <|"|> x <|"|> } <tool_call|>``.
    spaced_tokens = (TOOL_CALL, STRING, TOOL_CALL_END, TURN_END)
    summary = '<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3,o:{...}}<tool_call|>…'
    # What may precede the name (the first is the template's), the name's characters and the
    # arguments' literal syntax (``lmparse.tools.literal_call``).
    call_heads = (_CALL, _BARE)
    name_chars = NAME_CHARS
    grammar = GEMMA_LITERAL
    paren_grammar = GEMMA_PAREN_LITERAL  # ``call:NAME(...)``

    def start_block(self, open_tag: str) -> None:
        super().start_block(open_tag)
        self._past_end: list[str] | None = [] if open_tag in (TOOL_RESPONSE, EOS) else None
        self._eos = open_tag == EOS
        self._call = self._past_end is None and open_tag != ""  # a call after ``<|tool_call>``

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._bare_stage = _BARE_HEAD
        self._bare_call: tuple[str, list[str]] = ("", [])  # a bare call's name and JSON arguments, held

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        if self._call:  # (not super(): this is the hot entry)
            return LiteralCallParser._consume_stream_payload(self, text, events, final=final)
        if self._past_end is not None:
            if self._eos and not self.committed and not (self.calls_emitted or self.dropped):
                return 0, self._reject(events)  # no call yet: ``<eos>`` is not this family's end of a call turn
            return self._consume_past_end(self._past_end, text, events, final)
        return self._consume_bare(text, events, final)

    def _consume_past_end(self, past_end: list[str], text: str, events: Events, final: bool) -> PayloadStep:
        """After ``<|tool_response>`` the model plays the tool: not the reply.  Kept for
        ``dropped`` (one record at the end, if anything came)."""
        self._commit()
        past_end.append(text)
        if not final:
            return len(text), MORE
        past = "".join(past_end)
        if past:
            self._calls.cut(events, past, PAST_END)
        return len(text), PAYLOAD_CLOSED

    def _consume_bare(self, text: str, events: Events, final: bool) -> PayloadStep:
        """The reply's first characters, with no open tag: the spurious channel label, or a
        bare call held until the end of the reply proves it is the whole reply."""
        if self._bare_stage == _BARE_HEAD:
            if text.startswith(LABEL):
                self._cut(events, LABEL, LABEL_DROPPED)
                return len(LABEL), PAYLOAD_CLOSED
            if not final and at_partial(text, 0, LABEL, *_BARE_HEADS):
                return 0, MORE
            pos = self._bare_head(text, final)
            if pos is None:
                return 0, self._reject(events)
            if self._bare_stage == _BARE_HEAD:
                return pos, MORE
        else:
            pos = 0
        if self._bare_stage == _BARE_ARGS:
            literal = self._literal
            pos = literal.feed(text, pos, final)
            self._bare_call[1].append(literal.writer.take())
            if not literal.done:
                if literal.broken or final:
                    return pos, self._reject(events)  # text: the replay gives it all back
                return pos, MORE
            self._bare_stage = _BARE_AFTER
        end = skip_ws(text, pos)
        if end < len(text) or end - pos > _MAX_TRAILING:
            return pos, self._reject(events)  # more than the call: prose about the syntax
        if not final:
            return pos, MORE  # trailing whitespace stays the reply's
        name, arguments = self._bare_call  # the whole reply was this call
        self._begin_call()
        self._emit_name(events, name)
        self._calls.arguments(events, "".join(arguments))
        self._end_call(events)
        return pos, PAYLOAD_CLOSED

    def _bare_head(self, text: str, final: bool) -> int | None:
        """``call:NAME{`` or ``<call>NAME{`` with NAME an offered tool (the position of its
        ``{``; 0 while it is arriving), or None: not a bare call."""
        lead = next((head for head in _BARE_HEADS if text.startswith(head)), None)
        allowed = self.request.allowed_names
        if lead is None or not allowed:
            return None
        end = self.name_chars.match(text, len(lead)).end()  # type: ignore[union-attr]
        if end == len(text) and not final and end - len(lead) <= _MAX_NAME:
            return 0
        name = text[len(lead):end]
        if end == len(text) or text[end] != "{" or name not in allowed:
            return None
        self._bare_call = (name, [])
        self._bare_stage = _BARE_ARGS
        return end

    def _consume_close(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, bool]:
        if self.bare or self._past_end is not None:  # no close tag is owed
            return pos, True
        if text.startswith(TURN_END, pos):  # the turn ended where the close tag belonged
            return pos + len(TURN_END), True
        if not final and at_partial(text, pos, TURN_END, TOOL_CALL_END):
            return pos, False
        return super()._consume_close(text, pos, events, final)

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """Gemma object-literal arguments (``lmparse.constrain`` spells them with ``gemma`` rules)."""
        return derive_call_syntax(cls, "gemma", cls.write_arguments)
