"""Server-sent events as the upstream engines send them: bytes in, JSON events out, no I/O.

``SSELineDecoder`` is fed the response body in whatever pieces the network delivers (a
line, half a line, half a UTF-8 character, a CRLF split between two reads) and returns
the complete events so far; ``flush`` ends the body.  A line is ``data: {json}``,
llama.cpp's ``error: {json}``, or a bare JSON line; comments and the ``event:`` /
``id:`` / ``retry:`` fields are skipped.  ``data: [DONE]`` ends the stream, and so does
an error event or a line that is not JSON: ``done`` turns true and ``error`` says why.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import orjson

__all__ = ["Event", "SSELineDecoder", "error_text"]

Event = dict[str, Any]

# SSE ends a line at CR, LF or CRLF only (str.splitlines would also split a JSON string at U+2028).
_LINE_END = re.compile(r"\r\n|\r|\n")
_SKIPPED = (":", "event:", "id:", "retry:")
MAX_LINE = 32 * 1024 * 1024  # characters: a longer line is a failed stream, not memory without end


def error_text(event: Any) -> str | None:
    """The message of an error event (``{"error": ...}`` or ``{"object": "error", ...}``)."""
    if not isinstance(event, dict):
        return None
    error = event.get("error")
    if error is None and event.get("object") == "error":
        error = event
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


class SSELineDecoder:
    """Incremental: carries a partial line and a trailing CR across calls."""

    __slots__ = ("_text", "_partial", "_partial_size", "_trailing_cr", "done", "error", "error_event")

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []  # the pieces of a line not ended yet (joined once, when it ends)
        self._partial_size = 0
        self._trailing_cr = False
        self.done = False  # no event follows: [DONE], an error event or a line that is not JSON
        self.error: str | None = None  # why the stream failed, when it did
        self.error_event: Event | None = None  # the error event itself, when one ended it

    def decode(self, data: bytes | str) -> list[Event]:
        """The events that ``data`` completes."""
        text = self._text.decode(data) if isinstance(data, bytes) else data
        if not text or self.done:
            return []
        if self._trailing_cr and text.startswith("\n"):  # the LF of a CRLF split between reads
            text = text[1:]
        self._trailing_cr = text.endswith("\r")
        lines = _LINE_END.split(text)  # only the new text is scanned: a long line costs its length once
        if len(lines) == 1:
            self._partial.append(text)
            self._partial_size += len(text)
            if self._partial_size > MAX_LINE:
                self._partial, self._partial_size = [], 0
                self._fail(f"sent a line longer than {MAX_LINE} characters")
            return []
        if self._partial:
            lines[0] = "".join(self._partial) + lines[0]
        tail = lines.pop()
        self._partial, self._partial_size = ([tail], len(tail)) if tail else ([], 0)
        return self._events(lines)

    def flush(self) -> list[Event]:
        """The events of a last line the body did not end."""
        tail = "".join(self._partial) + self._text.decode(b"", final=True)
        self._partial, self._partial_size = [], 0
        return [] if self.done else self._events(_LINE_END.split(tail))

    def _events(self, lines: list[str]) -> list[Event]:
        events: list[Event] = []
        for line in lines:
            event = self._event(line.strip())
            if self.done:
                break
            if event is not None:
                events.append(event)
        return events

    def _event(self, line: str) -> Event | None:
        if not line or line.startswith(_SKIPPED):
            return None
        is_error = line.startswith("error:")
        if is_error or line.startswith("data:"):
            line = line.split(":", 1)[1].strip()
        if line == "[DONE]":
            self.done = True
            return None
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._fail(f"sent a line that is not JSON: {line[:200]!r}")
            return None
        message = error_text(event) if (is_error or isinstance(event, dict)) else None
        if is_error and message is None:
            message = str(event)
        if message is not None:
            self._fail(f"error: {message}")
            self.error_event = event if isinstance(event, dict) else None
            return None
        return event if isinstance(event, dict) else None

    def _fail(self, error: str) -> None:
        self.done, self.error = True, error
