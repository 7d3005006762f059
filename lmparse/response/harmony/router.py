"""Harmony routing: framed messages to deltas, with call identity, filtering and dense indices.

    final channel                        -> content (whatever the recipient)
    recipient functions.NAME             -> a tool call NAME, the body streams as arguments
    a built-in tool the request offers   -> a tool call of that name (``python``, ``browser.search``)
    a built-in tool it does not offer    -> ``dropped``, with the message text: not reasoning,
                                            and no client runs it
    any other recipient                  -> reasoning
    analysis channel                     -> reasoning
    commentary without recipient, none   -> content (commentary preambles are user-facing)

Calls to names the request does not expose are dropped (recorded in ``dropped``) without
taking an index.  A request that disables tools (``tool_choice="none"``, no tools) gets no
calls at all: such a body stays visible as text of its channel, and is recorded too.
"""

from __future__ import annotations

from collections.abc import Callable

from ...messages import DeltaMessage
from ...request import ParserRequest
from ...tools.calls import ACCEPTED, CallEmitter, Deltas, DroppedCall, new_call_id
from .header import function_name

__all__ = ["Router", "TRUNCATED_HEADER"]

TRUNCATED_HEADER = "truncated: the reply ended inside a message header"

_CONTENT, _REASONING, _CALL, _DISCARD, _BUILTIN = range(5)
# gpt-oss's built-in tools, as its system prompt names them: ``python``, ``browser.*``, ``container.*``.
_BUILTIN_NAMES = ("python",)
_BUILTIN_NAMESPACES = ("browser.", "container.")
BUILTIN_NOT_OFFERED = "a built-in tool the request does not offer; its message is in text"


def builtin_name(recipient: str | None) -> str | None:
    """The built-in tool a recipient addresses (``python``, ``browser.search``), else None."""
    clean = recipient.split("<|", 1)[0].strip() if recipient else ""
    if clean in _BUILTIN_NAMES or clean.startswith(_BUILTIN_NAMESPACES):
        return clean
    return None


class Router:
    """Turns framed messages into deltas, one delta per channel run within a chunk.

    Each call appends to ``out``, the current chunk's delta list; ``flush`` writes the text
    the open delta is still collecting, and must run before the chunk's list is returned.
    Calls go through the tool parsers' ``CallEmitter``: identity first, filtering, dense
    indices and drop records are theirs."""

    __slots__ = ("counting", "_calls", "_tools_enabled", "_offered", "_route", "_open", "_parts", "_builtin")

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._calls = CallEmitter(request.allowed_names, id_factory, request.max_calls)
        self._tools_enabled = request.tools_enabled
        # Built-in tools count as offered only when the request names them.
        self._offered = request.allowed_names if request.tools_enabled and request.allowed_names else frozenset()
        self._builtin: DroppedCall | None = None  # the record a built-in tool's message text goes to
        self.counting = False  # this body's tokens are reasoning tokens
        self._route = _CONTENT
        self._open: DeltaMessage | None = None  # the content or reasoning delta this chunk is extending
        self._parts: list[str] = []

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._calls.dropped

    def begin(self, out: Deltas, channel: str | None, recipient: str | None) -> None:
        route = self._route_of(out, channel, recipient)
        self._route = route
        self.counting = channel == "analysis" or route == _REASONING

    def _route_of(self, out: Deltas, channel: str | None, recipient: str | None) -> int:
        if channel == "final":
            return _CONTENT
        name = function_name(recipient)
        if name is None and (builtin := builtin_name(recipient)) is not None:
            if builtin not in self._offered:
                self._calls.drop(builtin, BUILTIN_NOT_OFFERED)
                self._builtin = self._calls.dropped[-1] = _BuiltinMessage(builtin)
                return _BUILTIN
            name = builtin  # offered: a call like any other
        if name is None:
            return _REASONING if recipient or channel == "analysis" else _CONTENT
        if not self._tools_enabled:
            # tool_choice "none" or no tools: nothing may become a call, and the body stays
            # visible as text of its channel rather than vanishing.
            self._calls.drop(name, "tool calls are disabled for this request; its arguments went to the text")
            return _REASONING if channel == "analysis" else _CONTENT
        if not name:
            self._calls.drop(None, "no function name")
            return _DISCARD
        self._flush_text()
        self._calls.begin()
        self._calls.name(out, name)  # or drops it: not among the request's tools
        return _CALL if self._calls.state == ACCEPTED else _DISCARD

    def cut(self, header: str) -> None:
        """A header the end of the reply cut off: recorded with its text, routed nowhere."""
        self._calls.cut(header, TRUNCATED_HEADER)

    def text(self, out: Deltas, text: str) -> None:
        if not text:
            return
        route = self._route
        if route == _DISCARD:
            return
        if route == _BUILTIN:
            self._builtin.add(text)  # type: ignore[union-attr]
            return
        if route == _CALL:
            if self._open is not None:
                self._flush_text()
            self._calls.arguments(out, text)
            return
        open_delta = self._open
        if open_delta is not None and (open_delta.content is not None) == (route == _CONTENT):
            self._parts.append(text)
            return
        self._flush_text()
        delta = DeltaMessage(content="") if route == _CONTENT else DeltaMessage(reasoning_content="")
        out.append((delta, False))
        self._open, self._parts = delta, [text]

    def end(self, out: Deltas) -> None:
        self._calls.end(out)  # an accepted call always carries an arguments object
        self._route = _CONTENT
        self.counting = False

    def flush(self) -> None:
        """Write what the open deltas are still collecting; the next chunk starts fresh."""
        if self._open is not None:
            self._flush_text()
        self._calls.flush()

    def _flush_text(self) -> None:
        delta = self._open
        if delta is None:
            return
        if self._parts:
            joined = "".join(self._parts)
            if delta.content is not None:
                delta.content += joined
            else:
                delta.reasoning_content = (delta.reasoning_content or "") + joined
        self._open, self._parts = None, []


class _BuiltinMessage(DroppedCall):
    """The drop record of a message to a built-in tool the request does not offer: its
    ``text`` is the message body, collected as it streams and joined when read."""

    __slots__ = ("_parts",)

    def __init__(self, name: str) -> None:
        self._parts: list[str] = []
        super().__init__(name, BUILTIN_NOT_OFFERED)

    def add(self, text: str) -> None:
        self._parts.append(text)

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @text.setter
    def text(self, value: str | None) -> None:
        self._parts[:] = [value] if value else []
