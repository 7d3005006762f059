"""JsonArguments: the current call's arguments written as one JSON value.

Shared by every dialect whose arguments are JSON (envelopes, section/call formats,
Mistral).  An object or array is forwarded verbatim as the scanner passes it; a value
written as a string or a scalar is held to its end and then normalized (a JSON-encoded
object is unwrapped, ``null`` becomes ``{}``).  While the scan is inside
the forwarded value, ``in_run`` is true and the owning parser's fast lane
(``JsonRunLane.feed_tool_block``) takes a chunk in which the value goes on in one step.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..markers import WHITESPACE
from .json_guard import plain_string_body
from .json_scanner import JsonValueScanner

from .base import RunTake, ToolParser
from .syntax import CallSyntax, derive_call_syntax
from .._mypyc import mypyc_attr

if TYPE_CHECKING:
    from .calls import CallEmitter, Events

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
    __slots__ = ("_calls", "scanner", "_held", "in_run")

    def __init__(self, calls: CallEmitter) -> None:
        self._calls = calls
        self.scanner = JsonValueScanner()
        self._held: list[str] = []  # a string or scalar value, until it is complete
        # After ``consume``: inside a forwarded value of a named call, where a chunk in which
        # the value neither ends nor breaks is argument text as it stands (the owner's fast lane).
        self.in_run = False

    def reset(self) -> None:
        self.scanner.reset()
        self._held = []

    def consume(self, text: str, pos: int, events: Events, final: bool) -> int:
        """Scan from ``pos`` (whitespace before the value is skipped); return the new
        position.  ``scanner.done`` / ``scanner.broken`` tell how the value stands."""
        scanner = self.scanner
        n = len(text)
        self._calls.verbatim = True  # (what breaks the object is the reply's markup: ``dropped`` keeps it)
        if not scanner.started:
            while pos < n and text[pos] in WHITESPACE:
                pos += 1
        end = scanner.scan(text, pos, final)
        if end > pos:
            if scanner.decoded and text[pos] == "{":  # (read whole by the C decoder: JSON as it stands)
                self._calls.whole_object(events, text[pos:end] if pos or end < n else text)
            elif scanner.container:
                self._calls.arguments(events, text[pos:end] if pos or end < n else text)
            else:
                self._held.append(text[pos:end])
            pos = end
        self.in_run = scanner.container and not scanner.done and self._calls.named
        return pos

    def flush(self, events: Events, complete: bool = True) -> None:
        """Emit a held string or scalar value: normalized if it is complete, else as written."""
        if self._held:
            raw = "".join(self._held)
            self._held = []
            self._calls.arguments(events, normalize_scalar_arguments(raw) if complete else raw)


@mypyc_attr(allow_interpreted_subclasses=True)
class JsonRunLane(ToolParser):
    """The fast lane of a tool parser whose current call's arguments are a ``JsonArguments``:
    inside the forwarded value, a chunk in which the value neither ends nor breaks is argument
    text as it stands: the scanner tries the chunk and undoes a failed try (inside a string,
    a chunk with no quote and no backslash needs no try)."""

    streaming = "arguments: the JSON source text as soon as it is lexically stable"
    _arguments: JsonArguments

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """JSON arguments, read off the dialect's own rendering (``lmparse.tools.syntax``)."""
        return derive_call_syntax(cls)

    def take_run(self, text: str) -> RunTake | None:
        scanner = self._arguments.scanner
        # (a chunk inside a string with no quote, backslash or escape pending: nothing to scan)
        if not text:
            return None
        calls = self._calls
        if scanner.in_string and not scanner.escape_pending:
            # Inside a value string: a chunk that does not end the string, holds only valid
            # escapes and leaves none pending is string body, and neither the scanner nor the
            # guard needs a step for it.
            if '"' not in text and "\\" not in text or (calls.in_value_string and plain_string_body(text)):
                index = calls.string_run(text)
                if index is not None:
                    return len(text), index, text
        good = calls.try_run(text)
        if good is not None and scanner.run_through(text):
            return len(text), calls.run(good), good
        return None
