"""JsonValueScanner: the lexical end of one JSON value, found incrementally.

It tracks container depth, strings and escapes, and never decodes or re-encodes:
the caller forwards the scanned source verbatim.  Work is pushed into C: a run of
complete strings and plain characters is consumed by one regex match, a string
body by ``str.find`` of its quotes, and a large value that arrives whole by the C JSON decoder.
Each input character is looked at a bounded number of times, whatever the chunking.
"""

from __future__ import annotations

from typing import Final

import json
import re

__all__ = ["JsonValueScanner", "SCALAR_START", "WHOLE_DECODER", "string_end"]

# Outside strings inside a container: everything but quotes, brackets and '<' (a
# protocol boundary: '<' is never valid JSON outside a string), plus whole strings.
_OUTSIDE: Final = re.compile(r'[^"\[\]{}<]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}<]*)*', re.DOTALL)
_SCALAR: Final = re.compile(r"[-+.0-9a-zA-Z]*")
SCALAR_START: Final = frozenset("-0123456789tfnNI")
# Below this many available characters the C decoder cannot pay for a failed try.
_WHOLE_VALUE_MIN: Final = 256
def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# (``NaN`` and ``Infinity`` are Python's, not JSON: a value holding one is scanned, not decoded)
WHOLE_DECODER: Final = json.JSONDecoder(strict=False, parse_constant=_not_json)
_DECODER: Final = WHOLE_DECODER

_NONE: Final = 0
_CONTAINER: Final = 1
_STRING: Final = 2
_SCALAR_KIND: Final = 3


class JsonValueScanner:
    """Scan one JSON value fed in pieces; ``done`` once its end is known.

    ``broken`` means the value cannot be completed (a character that no JSON value
    may contain at that point, such as the start of a protocol marker).
    """

    __slots__ = ("_kind", "container", "depth", "in_string", "escape_pending", "done", "broken", "decoded")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._kind = _NONE
        self.container = False  # an object or array: its source can be forwarded as it comes
        self.depth = 0
        self.in_string = False
        self.escape_pending = False
        self.done = False
        self.broken = False
        # The value arrived whole and the C decoder read it: it is valid JSON as it stands.
        self.decoded = False

    @property
    def started(self) -> bool:
        return self._kind != _NONE

    @property
    def is_string(self) -> bool:
        return self._kind == _STRING

    @property
    def is_scalar(self) -> bool:
        return self._kind == _SCALAR_KIND

    def scan(self, text: str, pos: int, final: bool = False) -> int:
        """Consume from ``pos``; return the position after what was consumed."""
        if self.in_string and not self.escape_pending:
            return self._from_string(text, pos)  # the hot path
        n = len(text)
        if pos >= n or self.done:
            return pos
        kind = self._kind
        if kind == _NONE:
            c = text[pos]
            if c == "{" or c == "[":
                if n - pos >= _WHOLE_VALUE_MIN:
                    try:
                        end = _DECODER.raw_decode(text, pos)[1]
                    except (ValueError, RecursionError):
                        pass
                    else:
                        self._kind = _CONTAINER
                        self.container = self.done = self.decoded = True
                        return end
                kind = self._kind = _CONTAINER
                self.container = True
                self.depth = 1
                pos += 1
            elif c == '"':
                kind = self._kind = _STRING
                self.in_string = True
                pos += 1
            elif c in SCALAR_START:
                kind = self._kind = _SCALAR_KIND
            else:
                self.done = self.broken = True
                return pos
        if kind == _STRING:
            pos = self._scan_string(text, pos, n)
            if not self.in_string:
                self.done = True
            return pos
        if kind == _SCALAR_KIND:
            pos = _SCALAR.match(text, pos).end()  # type: ignore[union-attr]  # matches empty: never None
            if pos < n or final:
                self.done = True
            return pos
        return self._scan_container(text, pos, n)

    def run_through(self, text: str) -> bool:
        """Consume all of ``text`` if the value neither ends nor breaks in it and say so;
        otherwise change nothing (a container's fast lane)."""
        if self.in_string and not self.escape_pending and self._kind == _CONTAINER:  # the usual case
            end = string_end(text)
            if end == -1:
                return True
            if end > 0:
                depth = self.depth
                self.in_string = False
                if self._scan_container(text, end, len(text)) == len(text) and not self.done:
                    return True
                self.depth, self.in_string, self.escape_pending = depth, True, False
                self.done = self.broken = False
                return False
        saved = self.depth, self.in_string, self.escape_pending
        if self.scan(text, 0) == len(text) and not self.done:
            return True
        self.depth, self.in_string, self.escape_pending = saved
        self.done = self.broken = False
        return False

    def _from_string(self, text: str, pos: int) -> int:
        """Inside a string: one ``str.find`` per quote in it, then what follows it."""
        n = len(text)
        end = self._scan_string(text, pos, n)
        if self.in_string:
            return end
        if self._kind == _STRING:
            self.done = True
            return end
        return self._scan_container(text, end, n)

    def _scan_container(self, text: str, pos: int, n: int) -> int:
        depth = self.depth
        while pos < n:
            if self.in_string:
                pos = self._scan_string(text, pos, n)
                continue
            pos = _OUTSIDE.match(text, pos).end()  # type: ignore[union-attr]  # matches empty: never None
            if pos >= n:
                break
            c = text[pos]
            pos += 1
            if c == '"':
                self.in_string = True
            elif c == "{" or c == "[":
                depth += 1
            elif c == "}" or c == "]":
                depth -= 1
                if depth == 0:
                    self.done = True
                    break
            else:  # '<': a protocol marker where JSON needs a value or punctuation
                self.done = self.broken = True
                pos -= 1
                break
        self.depth = depth
        return pos

    def _scan_string(self, text: str, pos: int, n: int) -> int:
        """Advance inside a string; clears ``in_string`` after its closing quote.  A quote
        closes it when an even run of backslashes precedes it (counted back to ``pos``, where
        no escape is pending): so only quotes are searched for, with ``str.find``."""
        if self.escape_pending:
            if pos >= n:
                return pos
            pos += 1
            self.escape_pending = False
        quote = text.find('"', pos, n)
        while quote != -1:
            # (a quote after one backslash that follows no other is escaped: the usual case, no count)
            if text[quote - 1] != "\\" or quote == pos or (
                quote - 1 > pos and text[quote - 2] == "\\" and _escaping_run(text, pos, quote) % 2 == 0
            ):
                self.in_string = False
                return quote + 1
            quote = text.find('"', quote + 1, n)
        if n > pos and text[n - 1] == "\\" and _escaping_run(text, pos, n) % 2:
            self.escape_pending = True  # the next chunk's first character is escaped
        return n


def string_end(text: str) -> int:
    """Read inside a JSON string with no escape pending: the position after the quote that
    closes it in ``text``; -1 when the string stays open through ``text``, -2 when ``text``
    ends inside an escape.  One ``str.find`` per quote, as ``_scan_string``."""
    quote = text.find('"')
    if "\\" not in text:
        return -1 if quote == -1 else quote + 1
    while quote != -1:
        # (a quote after one backslash that follows no other is escaped: the usual case, no count)
        if quote == 0 or text[quote - 1] != "\\" or (
            quote > 1 and text[quote - 2] == "\\" and _escaping_run(text, 0, quote) % 2 == 0
        ):
            return quote + 1
        quote = text.find('"', quote + 1)
    return -1 if text[-1] != "\\" or _escaping_run(text, 0, len(text)) % 2 == 0 else -2


def _escaping_run(text: str, start: int, end: int) -> int:
    """How many backslashes end ``text[start:end]``."""
    k = end
    while k > start and text[k - 1] == "\\":
        k -= 1
    return end - k
