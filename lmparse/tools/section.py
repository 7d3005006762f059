"""SectionToolParser: a section of marked calls, each a header then JSON arguments.

Kimi-K2 and DeepSeek-V3 / V3.1 write one outer section (the tool block) holding calls::

    SECTION_BEGIN CALL_BEGIN header HEADER_END [ARGS_PREFIX] {json} [ARGS_SUFFIX] CALL_END ... SECTION_END

A dialect declares the markers and splits its header into ``(name, call_id)``;
everything else lives here.  The arguments' source is forwarded verbatim as soon as
the scanner has passed it (with a fast lane for chunks inside one of its strings);
arguments written as a JSON string or scalar are unwrapped as in the JSON envelope.
A call missing its end marker is ended by the next call or by the section end; text
between the arguments and the end marker is kept as written.
"""

from __future__ import annotations

from typing import ClassVar, Final

from collections.abc import Callable

from ..markers import WHITESPACE, MarkerSet, held_prefix_start
from ..request import ParserRequest
from .base import MORE, PAYLOAD_CLOSED, RUN, Events, Payload, PayloadStep
from .calls import new_call_id
from .json_arguments import JsonArguments, JsonRunLane
from .._mypyc import mypyc_attr

__all__ = ["SectionToolParser"]

_BETWEEN: Final = 0
_HEADER: Final = 1
_ARGS: Final = 2
_TAIL: Final = 3
# A header is a name and maybe an index: one that runs this long without its end is prose.
_MAX_HEADER: Final = 512


def _skip_ws(text: str, pos: int, n: int) -> int:
    while pos < n and text[pos] in WHITESPACE:
        pos += 1
    return pos


@mypyc_attr(allow_interpreted_subclasses=True)
class SectionToolParser(JsonRunLane):
    call_begin: ClassVar[str] = ""
    header_end: ClassVar[str] = ""
    header_forbidden: ClassVar[str] = "<\n"  # characters a header never contains
    args_prefix: ClassVar[str] = ""  # e.g. DeepSeek-V3's "```json" fence, optional on the wire
    args_suffix: ClassVar[str] = ""  # and its closing "```"
    call_end: ClassVar[str] = ""

    tool_close_tag: ClassVar[str] = ""  # a section always ends with its own marker

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._tail_markers = MarkerSet.of((self.call_end, self.tool_close_tag, self.call_begin, self.args_suffix))
        self._ids_used: set[str] = set()
        super().__init__(request, id_factory)

    @classmethod
    def _split_header(cls, header: str) -> tuple[str | None, str | None]:
        """``(function name or None, the model's call id or None)`` of a complete header."""
        return header.strip() or None, None

    # ---- the payload grammar ----------------------------------------------------------

    def _reset_payload(self) -> None:
        self._phase = _BETWEEN
        self._arguments = JsonArguments(self._calls)

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos = 0
        n = len(text)
        while True:
            phase = self._phase
            if phase == _ARGS:
                pos, status = self._consume_arguments(text, pos, events, final)
                if self._phase == _ARGS:
                    return pos, status
            elif phase == _TAIL:
                pos = self._consume_tail(text, pos, events, final)
                if self._phase == _TAIL:
                    return pos, MORE
            elif phase == _HEADER:
                pos, verdict = self._consume_header(text, pos, events)
                if verdict is not None:
                    return pos, verdict
            else:
                start, pos = pos, _skip_ws(text, pos, n)
                if text.startswith(self.call_begin, pos):
                    self._begin_call()
                    self._phase = _HEADER
                    pos += len(self.call_begin)
                elif text.startswith(self.tool_close_tag, pos):
                    return pos, PAYLOAD_CLOSED
                else:
                    rest = text[pos:]
                    if not rest or self.call_begin.startswith(rest) or self.tool_close_tag.startswith(rest):
                        return start, MORE  # the whitespace too: it is ours only if a marker follows
                    return start, self._reject(events)  # prose inside the section: it is not ours

    def _consume_header(self, text: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        """A call's header up to its end marker: None to go on, or the payload's status."""
        end = text.find(self.header_end, pos)
        region = text[pos : held_prefix_start(text, self.header_end, pos)] if end == -1 else text[pos:end]
        # Whitespace around a header (Kimi often ends one with a newline) is not prose.
        if len(region) > _MAX_HEADER or any(c in region.strip(WHITESPACE) for c in self.header_forbidden):
            return pos, self._reject(events)
        if end == -1:
            return pos, MORE
        name, call_id = self._split_header(region)
        if name:
            if call_id in self._ids_used:
                call_id = None  # a repeated id would merge two calls downstream
            elif call_id is not None:
                self._ids_used.add(call_id)
            self._emit_name(events, name, call_id)
        self._phase = _ARGS
        self._arguments.reset()
        self._prefix_open = bool(self.args_prefix)  # the optional fence may still come, once
        return end + len(self.header_end), None

    def _consume_arguments(self, text: str, pos: int, events: Events, final: bool) -> PayloadStep:
        """The call's JSON arguments (the status is the payload's while the phase stays)."""
        arguments = self._arguments
        if not arguments.scanner.started:
            n = len(text)
            pos = _skip_ws(text, pos, n)
            prefix = self.args_prefix
            if self._prefix_open and text.startswith(prefix, pos):
                pos = _skip_ws(text, pos + len(prefix), n)
                self._prefix_open = False
            if pos == n or (self._prefix_open and prefix.startswith(text[pos:])):
                return n if final else pos, MORE  # at the end of the reply, a cut-off fence is syntax
        pos = arguments.consume(text, pos, events, final)
        if arguments.scanner.done:
            arguments.flush(events)
            self._phase = _TAIL  # also when the value broke off: the tail decides what follows
            return pos, MORE
        return pos, RUN if arguments.in_run else MORE

    def _consume_tail(self, text: str, pos: int, events: Events, final: bool) -> int:
        markers = self._tail_markers
        n = len(text)
        while True:
            start, pos = pos, _skip_ws(text, pos, n)  # whitespace is syntax only before a marker
            if pos == n:
                return start
            marker = markers.startswith_at(text, pos)
            if marker is None:
                if markers.is_proper_prefix(text, pos):
                    return n if final else start  # at the end of the reply, a cut-off marker is syntax
                found = markers.search(text, pos)
                # Whitespace before a marker, and a marker cut off at the end, are syntax
                # however the text was chunked.
                stop = found.start() if found else markers.held_start(text, pos)
                while text[stop - 1] in WHITESPACE:
                    stop -= 1
                self._calls.arguments(events, text[start:stop])  # not syntax: kept as written
                pos = stop
                continue
            if marker == self.args_suffix:
                # The closing fence is syntax before the call's end only: one with other
                # text after it is text, with the whitespace before it.
                after = _skip_ws(text, pos + len(marker), n)
                if not final and (after == n or markers.is_proper_prefix(text, after)):
                    return start  # what follows decides
                if after < n and markers.startswith_at(text, after) is None and not markers.is_proper_prefix(
                        text, after):  # (at the end of the reply, a cut-off marker is syntax)
                    self._calls.arguments(events, text[start:pos + len(marker)])
                pos += len(marker)
                continue
            self._end_call(events)
            self._phase = _BETWEEN
            return pos + len(marker) if marker == self.call_end else pos

    def _finish_payload(self, events: Events) -> Payload:
        if self._phase == _ARGS:
            self._arguments.flush(events, complete=False)  # truncated: as written
        return super()._finish_payload(events)
