"""Harmony routing: framed messages to content events, with call identity, filtering and dense indices.

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

from typing import Final

from collections.abc import Callable

from ...events import CONTENT, REASONING, DroppedCall, Events, Text
from ...request import ParserRequest
from ...tools.calls import ACCEPTED, CallEmitter, new_call_id
from .header import function_name

__all__ = ["Router", "TRUNCATED_HEADER"]

TRUNCATED_HEADER: Final = "truncated: the reply ended inside a message header"

_CONTENT: Final = 0
_REASONING: Final = 1
_CALL: Final = 2
_DISCARD: Final = 3
_BUILTIN: Final = 4
# gpt-oss's built-in tools, as its system prompt names them: ``python``, ``browser.*``, ``container.*``.
_BUILTIN_NAMES: Final = ("python",)
_BUILTIN_NAMESPACES: Final = ("browser.", "container.")
BUILTIN_NOT_OFFERED: Final = "a built-in tool the request does not offer; its message is in text"


def builtin_name(recipient: str | None) -> str | None:
    """The built-in tool a recipient addresses (``python``, ``browser.search``), else None."""
    clean = recipient.split("<|", 1)[0].strip() if recipient else ""
    if clean in _BUILTIN_NAMES or clean.startswith(_BUILTIN_NAMESPACES):
        return clean
    return None


class Router:
    """Turns framed messages into content events, appended to ``out`` (the chunk's list).

    Calls go through the tool parsers' ``CallEmitter``: identity first, filtering, dense
    indices and drop records are theirs."""

    __slots__ = ("counting", "_calls", "_tools_enabled", "_offered", "_route", "_builtin")

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._calls = CallEmitter(request.allowed_names, id_factory, request.max_calls)
        self._tools_enabled = request.tools_enabled
        # Built-in tools count as offered only when the request names them.
        self._offered = request.allowed_names if request.tools_enabled and request.allowed_names else frozenset()
        self._builtin: _BuiltinMessage | None = None  # the record a built-in tool's message text goes to
        self.counting = False  # this body's tokens are reasoning tokens
        self._route = _CONTENT

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._calls.dropped

    def begin(self, out: Events, channel: str | None, recipient: str | None) -> None:
        route = self._route_of(out, channel, recipient)
        self._route = route
        self.counting = channel == "analysis" or route == _REASONING

    def _route_of(self, out: Events, channel: str | None, recipient: str | None) -> int:
        if channel == "final":
            return _CONTENT
        name = function_name(recipient)
        if name is None and (builtin := builtin_name(recipient)) is not None:
            if builtin not in self._offered:
                self._builtin = message = _BuiltinMessage(builtin)
                self._calls.drop_record(out, message)
                return _BUILTIN
            name = builtin  # offered: a call like any other
        if name is None:
            return _REASONING if recipient or channel == "analysis" else _CONTENT
        if not self._tools_enabled:
            # tool_choice "none" or no tools: nothing may become a call, and the body stays
            # visible as text of its channel rather than vanishing.
            self._calls.drop(out, name, "tool calls are disabled for this request; its arguments went to the text")
            return _REASONING if channel == "analysis" else _CONTENT
        if not name:
            self._calls.drop(out, None, "no function name")
            return _DISCARD
        self._calls.begin()
        # gpt-oss's ``python`` takes code, not a JSON object: its body is the call's payload as
        # written, outside the JSON guard (rule 6 is about JSON arguments; ``browser.*`` and
        # ``container.*`` take JSON and stay guarded).
        self._calls.json_arguments = builtin_name(recipient) not in _BUILTIN_NAMES
        self._calls.name(out, name)  # or drops it: not among the request's tools
        return _CALL if self._calls.state == ACCEPTED else _DISCARD

    def cut(self, out: Events, header: str) -> None:
        """A header the end of the reply cut off: recorded with its text, routed nowhere."""
        self._calls.cut(out, header, TRUNCATED_HEADER)

    def text(self, out: Events, text: str) -> None:
        if not text:
            return
        route = self._route
        if route == _CONTENT:
            out.append(Text(CONTENT, text))
        elif route == _REASONING:
            out.append(Text(REASONING, text))
        elif route == _CALL:
            self._calls.arguments(out, text)
        elif route == _BUILTIN and self._builtin is not None:
            self._builtin.add(text)

    def end(self, out: Events) -> None:
        self._calls.end(out)  # an accepted call always carries an arguments object
        self._route = _CONTENT
        self.counting = False


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
