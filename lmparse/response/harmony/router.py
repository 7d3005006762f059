"""Harmony routing: framed messages to deltas, with call identity, filtering and dense indices.

    final channel                        -> content (whatever the recipient)
    recipient functions.NAME             -> a tool call NAME, the body streams as arguments
    any other recipient (python, browser) -> reasoning: the model talking to a tool the
                                            client does not host is part of its work
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

_CONTENT, _REASONING, _CALL, _DISCARD = range(4)


class Router:
    """Turns framed messages into deltas, one delta per channel run within a chunk.

    Each call appends to ``out``, the current chunk's delta list; ``flush`` writes the text
    the open delta is still collecting, and must run before the chunk's list is returned.
    Calls go through the tool parsers' ``CallEmitter``: identity first, filtering, dense
    indices and drop records are theirs."""

    __slots__ = ("counting", "_calls", "_tools_enabled", "_route", "_open", "_parts")

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._calls = CallEmitter(request.allowed_names, id_factory, request.max_calls)
        self._tools_enabled = request.tools_enabled
        self.counting = False  # this body's tokens are reasoning tokens
        self._route = _CONTENT
        self._open: DeltaMessage | None = None  # the content or reasoning delta this chunk is extending
        self._parts: list[str] = []

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._calls.dropped

    def begin(self, out: Deltas, channel: str | None, recipient: str | None) -> None:
        name = function_name(recipient) if channel != "final" else None
        if name is None:
            if channel == "final":
                route = _CONTENT
            else:
                route = _REASONING if recipient or channel == "analysis" else _CONTENT
        elif not self._tools_enabled:
            # tool_choice "none" or no tools: nothing may become a call, and the body stays
            # visible as text of its channel rather than vanishing.
            self._calls.drop(name, "tool calls are disabled for this request; its arguments went to the text")
            route = _REASONING if channel == "analysis" else _CONTENT
        elif not name:
            self._calls.drop(None, "no function name")
            route = _DISCARD
        else:
            self._flush_text()
            self._calls.begin()
            self._calls.name(out, name)  # or drops it: not among the request's tools
            route = _CALL if self._calls.state == ACCEPTED else _DISCARD
        self._route = route
        self.counting = channel == "analysis" or route == _REASONING

    def cut(self, header: str) -> None:
        """A header the end of the reply cut off: recorded with its text, routed nowhere."""
        self._calls.cut(header, TRUNCATED_HEADER)

    def text(self, out: Deltas, text: str) -> None:
        if not text:
            return
        route = self._route
        if route == _DISCARD:
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
        if self._calls.parts:
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
