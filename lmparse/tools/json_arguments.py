"""JsonArguments: the current call's arguments written as one JSON value.

Shared by every dialect whose arguments are JSON (envelopes, section/call formats,
Mistral).  An object or array is forwarded verbatim as the scanner passes it; a value
written as a string or a scalar is held to its end and then normalized (a JSON-encoded
object is unwrapped, ``null`` becomes ``{}``).  While the scan is inside a string of
the forwarded value, ``in_run`` is true and the owning parser's fast lane
(``JsonRunLane._feed_run``) takes a chunk with no quote in one step.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..markers import WHITESPACE
from .json_scanner import JsonValueScanner

if TYPE_CHECKING:
    from .calls import CallEmitter, Deltas

__all__ = ["JsonArguments", "JsonRunLane", "normalize_scalar_arguments"]


def normalize_scalar_arguments(raw: str) -> str:
    """Arguments written as a string or scalar: unwrap a JSON-encoded object, map null to {}."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if value is None:
        return "{}"
    if isinstance(value, str):
        inner = value.strip()
        if inner.startswith("{"):
            try:
                if isinstance(json.loads(inner), dict):
                    return inner
            except ValueError:
                pass
    return raw


class JsonArguments:
    __slots__ = ("_calls", "scanner", "_held")

    def __init__(self, calls: CallEmitter) -> None:
        self._calls = calls
        self.scanner = JsonValueScanner()
        self._held: list[str] = []  # a string or scalar value, until it is complete

    def reset(self) -> None:
        self.scanner.reset()
        self._held = []

    def consume(self, text: str, pos: int, deltas: Deltas, final: bool) -> int:
        """Scan from ``pos`` (whitespace before the value is skipped); return the new
        position.  ``scanner.done`` / ``scanner.broken`` tell how the value stands."""
        scanner = self.scanner
        n = len(text)
        if not scanner.started:
            while pos < n and text[pos] in WHITESPACE:
                pos += 1
        end = scanner.scan(text, pos, final)
        if end > pos:
            if scanner.container:
                self._calls.arguments(deltas, text[pos:end] if pos or end < n else text)
            else:
                self._held.append(text[pos:end])
            pos = end
        return pos

    @property
    def in_run(self) -> bool:
        """Inside a string of a forwarded value of a named call: ``feed_run`` may take the next chunk."""
        scanner = self.scanner
        return not scanner.done and scanner.in_string and scanner.container and self._calls.named

    def flush(self, deltas: Deltas, complete: bool = True) -> None:
        """Emit a held string or scalar value: normalized if it is complete, else as written."""
        if self._held:
            raw = "".join(self._held)
            self._held = []
            self._calls.arguments(deltas, normalize_scalar_arguments(raw) if complete else raw)


class JsonRunLane:
    """The fast lane of a tool parser whose current call's arguments are a ``JsonArguments``."""

    _arguments: JsonArguments
    _calls: CallEmitter

    def _feed_run(self, text: str, deltas: Deltas) -> bool:
        """Inside a string of the forwarded value, a chunk with no quote stays inside it: it
        is argument text as it stands (backslashes only move the escape state)."""
        if '"' in text:
            return False
        scanner = self._arguments.scanner
        if scanner.escape_pending or "\\" in text:
            scanner.scan(text, 0)
        self._calls.arguments_run(deltas, text)
        return True
