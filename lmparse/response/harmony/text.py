"""The text path: literal Harmony markers in decoded text, framed by ``FRAMING``."""

from __future__ import annotations

from typing import Final

from ...markers import MarkerSet
from ...events import Events
from .framing import MARKER_EVENTS, Event, Framer, Framing, text_events
from .header import parse_header

__all__ = ["TextLexer", "TextMessages"]

# A first message may carry its recipient before the channel, as the official template
# renders it: `<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>`.
RECIPIENT_OPENERS: Final = (" to=", "to=")

_ALL: Final = MarkerSet(MARKER_EVENTS)
_HEADER: Final = Framing.HEADER  # module names: enum attribute lookups are slow
_BODY: Final = Framing.BODY
# Inside a header or a body, only the markers that are more than text there are searched for.
_SEARCHED: Final = {
    state: MarkerSet(m for m, event in MARKER_EVENTS.items() if event not in text_events(state))
    for state in (Framing.HEADER, Framing.BODY)
}


class TextMessages:
    """Headers as text for ``parse_header``; bodies are already text."""

    __slots__ = ("_header", "_header_chars", "_role_known")
    verbatim_bodies = True

    def __init__(self) -> None:
        self._header: list[str] = []
        self._header_chars = 0
        self._role_known = True

    @property
    def held_chars(self) -> int:
        return self._header_chars

    def open_header(self, role_known: bool) -> None:
        self._role_known = role_known
        self._header, self._header_chars = [], 0

    def add_header(self, payload: str) -> None:
        self._header.append(payload)
        self._header_chars += len(payload)

    def close_header(self) -> tuple[str | None, str | None] | str:
        header = self.drop_header()
        parsed = parse_header(header, self._role_known)
        return header if parsed is None else parsed

    def drop_header(self) -> str:
        header = "".join(self._header)
        self._header, self._header_chars = [], 0
        return header

    def open_body(self) -> None:
        pass

    def body_text(self, payload: str, reasoning: bool) -> str:
        return payload

    def end_body(self, stop: str | None) -> str:
        return ""


class TextLexer:
    """Finds the markers in streamed text; holds a partial marker at the end of a chunk."""

    __slots__ = ("framer", "messages", "_pending")

    def __init__(self, framer: Framer[str], messages: TextMessages) -> None:
        self.framer = framer
        self.messages = messages
        self._pending = ""

    @property
    def held_chars(self) -> int:
        return len(self._pending) + self.messages.held_chars

    def feed(self, text: str, final: bool, out: Events) -> None:
        buf = self._pending + text if self._pending else text
        pos, n = 0, len(buf)
        framer = self.framer
        while pos < n:
            state = framer.state
            if state is _HEADER or state is _BODY:
                at = self._inside(buf, pos, final, out)
            else:
                at = self._at_boundary(buf, pos, final, out)
            if at < 0:  # the rest may still become a marker
                pos = ~at
                break
            pos = at
        self._pending = buf[pos:]
        if final:
            framer.handle(Event.EOS, None, out)

    def _inside(self, buf: str, pos: int, final: bool, out: Events) -> int:
        """A header's or body's text up to its next marker; ``~end`` when it holds the rest."""
        markers = _SEARCHED[self.framer.state]
        match = markers.search(buf, pos)
        if match is None:
            end = len(buf) if final else markers.held_start(buf, pos)
            if end > pos:
                self.framer.text(buf[pos:end], out)
            return ~end
        start, end = match.span()
        if start > pos:
            self.framer.text(buf[pos:start], out)
        marker = match.group()
        self.framer.handle(MARKER_EVENTS[marker], marker, out)
        return end

    def _at_boundary(self, buf: str, pos: int, final: bool, out: Events) -> int:
        """Before the first message or between two: a marker, the reply's opening recipient,
        or text (which opens a plain body and is read there)."""
        framer = self.framer
        marker = _ALL.startswith_at(buf, pos)
        if marker is not None:
            framer.handle(MARKER_EVENTS[marker], marker, out)
            return pos + len(marker)
        opening = framer.state is Framing.OPENING
        if opening and buf.startswith(RECIPIENT_OPENERS, pos):
            framer.handle(Event.RECIPIENT, "", out)  # the opener is read as header text
            return pos
        if not final and (
            _ALL.is_proper_prefix(buf, pos)
            or (opening and len(buf) - pos < 4 and any(o.startswith(buf[pos:]) for o in RECIPIENT_OPENERS))
        ):
            return ~pos
        framer.handle(Event.TEXT, "", out)  # the text is read by the body it opens
        return pos

