"""Mistral / Magistral / Devstral / Ministral tool calls, after the ``[TOOL_CALLS]`` marker.

Two wire forms, told apart by the first character after the marker:

* tokenizer < v11 (Mistral 7B v0.3, Nemo): ``[TOOL_CALLS][{"name": NAME, "arguments": {...}}, ...]``,
  one JSON array of envelopes, parsed by the shared envelope parser.  Nemo's template
  sorts keys (``arguments`` before ``name``) and appends ``"id"``: that id is skipped,
  since it comes after the name and the identity delta cannot wait for it.
* v11+ (Small 3.1/3.2, Magistral, Devstral, Ministral 3): ``[TOOL_CALLS]NAME[ARGS]{...}``,
  each call with its own marker; Small 3.2's template writes ``NAME[CALL_ID]ID[ARGS]{...}``
  and ID becomes the call id.

Tokenizer v13 (Ministral 3 Reasoning; SMG's ``mistral_v13``) writes only the v11+ form, and
without ``[CALL_ID]`` ("no longer tokenizes the call id"): ``MistralV13ToolParser`` is the
same reader with those two forms switched off (``call_id_marker``, ``array_form``), so a
``[CALL_ID]`` head or a JSON array after the marker is text there.

There is no close tag: a block ends where its JSON ends and what follows is text.
Arguments are forwarded verbatim as soon as the JSON scanner has passed them.

Tokenization: ``[TOOL_CALLS]`` is one control token (id 5 in SentencePiece v3/v7, 9 in
tekken 240911) and vanishes when the server skips special tokens, so keep them.
``[ARGS]`` and ``[CALL_ID]`` are control tokens only in the v11+ tekken vocabularies,
none of which we have; in ours they read as text (``[``, ``ARGS``, ``]``), so no prefix
tuple is declared and a split marker is held the general way.
"""

from __future__ import annotations

from typing import ClassVar, Final

import json
import re

from ..base import MORE, PAYLOAD_CLOSED, RUN, Events, Payload, PayloadStep
from ..json_envelope import JsonToolParser
from ._syntax import at_partial, skip_ws
from ..._mypyc import mypyc_attr

TOOL_CALLS: Final = "[TOOL_CALLS]"
ARGS: Final = "[ARGS]"
CALL_ID: Final = "[CALL_ID]"
_WORD: Final = re.compile(r'[^\s\[\]{}"]*')  # characters of a name or a call id
_MAX_WORD: Final = 256  # longer is prose, not a name: a bound on what is held
# Wire forms, and the stages of the [ARGS] form.
_ARRAY: Final = 1
_NAMED: Final = 2
_NAME: Final = 0
_ID: Final = 1
_VALUE: Final = 2


@mypyc_attr(allow_interpreted_subclasses=True)
class MistralToolParser(JsonToolParser):
    summary = '[TOOL_CALLS]NAME[ARGS]{...} or [TOOL_CALLS][{"name": NAME, "arguments": {...}}, …]'
    tool_open_tags = (TOOL_CALLS,)
    tool_close_tag = None
    argument_field = "arguments"
    call_id_marker: ClassVar[str | None] = CALL_ID  # None: ``NAME[CALL_ID]ID`` is not a head (v13)
    array_form: ClassVar[bool] = True  # False: only ``[TOOL_CALLS]NAME[ARGS]{...}`` (v13)

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._form = 0
        self._stage = _NAME
        self._word = ""
        self._name = ""
        self._spaced = False  # whitespace came between the marker and the name

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        if not self._form:
            first = skip_ws(text, 0)
            if first == len(text):
                return 0, MORE
            self._form = _ARRAY if self.array_form and text[first] in "[{" else _NAMED
        if self._form == _ARRAY:
            return super()._consume_stream_payload(text, events, final=final)
        pos = 0
        if self._stage != _VALUE:
            pos, status = self._consume_head(text, events, final)
            if self._stage != _VALUE or status is not MORE:
                return pos, status
        return self._consume_arguments(text, pos, events, final)

    def _consume_head(self, text: str, events: Events, final: bool) -> PayloadStep:
        """``NAME[ARGS]``, ``NAME[CALL_ID]ID[ARGS]`` or ``NAME{``; the call opens there."""
        pos, n = 0, len(text)
        call_id = self.call_id_marker
        while True:
            if self._stage == _NAME and not self._word:
                start, pos = pos, skip_ws(text, pos)
                self._spaced = self._spaced or pos > start
            end = _WORD.match(text, pos).end()  # type: ignore[union-attr]  # it matches the empty string
            word = self._word + text[pos:end]
            pos = end
            if len(word) > _MAX_WORD:
                return pos, self._reject(events)
            self._word = word
            if pos == n:
                if final and self._spaced and self._stage == _NAME:
                    # A word cut off by the end of the reply is a name only where templates
                    # write one, right after the marker; after whitespace it is prose.
                    return pos, self._reject(events)
                return pos, MORE
            if word and self._stage == _NAME and call_id and text.startswith(call_id, pos):
                self._name, self._word, self._stage = word, "", _ID
                pos += len(call_id)
                continue
            if word and text.startswith(ARGS, pos):
                name, call_id = (self._name, word) if self._stage == _ID else (word, None)
                self._stage = _VALUE
                self._begin_call()
                self._emit_name(events, name, call_id)
                self._arguments.reset()
                return pos + len(ARGS), MORE
            value = skip_ws(text, pos)
            if word and self._stage == _NAME and value < n and text[value] == "{":
                # ``NAME{...}``: what a v11+ stream reads like once a server has skipped
                # the control token ``[ARGS]`` (``[TOOL_CALLS]`` kept).
                self._stage = _VALUE
                self._begin_call()
                self._emit_name(events, word)
                self._arguments.reset()
                return value, MORE
            if value == n or at_partial(text, pos, ARGS, *((call_id,) if call_id else ())):
                return pos, MORE  # (at the end of the reply, a head cut off here is the block's syntax)
            return pos, self._reject(events)  # prose after the marker: the block is text

    def _consume_arguments(self, text: str, pos: int, events: Events, final: bool) -> PayloadStep:
        arguments = self._arguments
        pos = arguments.consume(text, pos, events, final)
        if not arguments.scanner.done:
            return pos, RUN if arguments.in_run else MORE
        if arguments.scanner.broken:  # ``[ARGS]`` not followed by JSON: the call has no arguments
            return pos, self._reject(events)
        arguments.flush(events)
        self._end_call(events)
        return pos, PAYLOAD_CLOSED

    def _finish_payload(self, events: Events) -> Payload:
        if self._form == _NAMED and self._stage == _VALUE:
            self._arguments.flush(events, complete=False)  # truncated: as written
        return super()._finish_payload(events)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """The v11+ form, as Ministral 3's template writes it: one marker per call."""
        return "".join(f"{TOOL_CALLS}{name}{ARGS}{arguments}" for name, arguments in calls)

    @classmethod
    def render_array(cls, calls: list[tuple[str, str]]) -> str:
        """The pre-v11 form: one JSON array of envelopes after a single marker."""
        if not calls:
            return ""
        body = ", ".join(
            f'{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": {arguments}}}' for name, arguments in calls
        )
        return f"{TOOL_CALLS}[{body}]"


@mypyc_attr(allow_interpreted_subclasses=True)
class MistralV13ToolParser(MistralToolParser):
    """Tokenizer v13: ``[TOOL_CALLS]NAME[ARGS]{...}`` per call, and nothing else."""

    summary = "[TOOL_CALLS]NAME[ARGS]{...} per call (tokenizer v13: no [CALL_ID], no JSON array)"
    call_id_marker = None
    array_form = False
