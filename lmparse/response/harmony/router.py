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

import logging
from typing import Callable

from ...messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from ...request import ParserRequest
from ...tools.base import Deltas, DroppedCall, new_call_id
from .header import function_name

__all__ = ["Router"]

logger = logging.getLogger("lmparse")

_CONTENT, _REASONING, _CALL, _DISCARD = range(4)


class Router:
    """Turns framed messages into deltas, one delta per channel run within a chunk.

    Each call appends to ``out``, the current chunk's delta list; ``flush`` writes the text
    the open delta is still collecting, and must run before the chunk's list is returned."""

    __slots__ = (
        "dropped", "calls_emitted", "counting", "_allowed", "_tools_enabled", "_id_factory", "_route",
        "_args_sent", "_call_index", "_open", "_open_kind", "_parts",
    )

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._allowed = request.allowed_names
        self._tools_enabled = request.tools_enabled
        self._id_factory = id_factory
        self.dropped: list[DroppedCall] = []
        self.calls_emitted = 0
        self.counting = False  # this body's tokens are reasoning tokens
        self._route = _CONTENT
        self._args_sent = False
        self._call_index = -1
        self._open: DeltaMessage | None = None  # the delta this chunk is still extending
        self._open_kind = -1
        self._parts: list[str] = []

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
            self._drop(name, "tool calls are disabled for this request; its arguments went to the text")
            route = _REASONING if channel == "analysis" else _CONTENT
        elif not name:
            self._drop(None, "no function name")
            route = _DISCARD
        elif self._allowed is not None and name not in self._allowed:
            self._drop(name, "not among the request's tools")
            route = _DISCARD
        else:
            route = _CALL
            self._call_index = index = self.calls_emitted
            self.calls_emitted += 1
            self._args_sent = False
            self.flush()
            call = DeltaToolCall(index, self._id_factory(), "function", DeltaFunctionCall(name, None))
            self._open = delta = DeltaMessage(None, None, [call])
            self._open_kind = _CALL
            out.append((delta, True))
        self._route = route
        self.counting = channel == "analysis" or route == _REASONING

    def text(self, out: Deltas, text: str) -> None:
        if not text:
            return
        route = self._route
        if route == _DISCARD:
            return
        if route == _CALL:
            self._args_sent = True
        if route == self._open_kind and self._open is not None:
            self._parts.append(text)
            return
        self.flush()
        if route == _CONTENT:
            delta = DeltaMessage(content="")
        elif route == _REASONING:
            delta = DeltaMessage(reasoning_content="")
        else:
            delta = DeltaMessage(None, None, [DeltaToolCall(self._call_index, None, None, DeltaFunctionCall(None, ""))])
        out.append((delta, route == _CALL))
        self._open, self._open_kind, self._parts = delta, route, [text]

    def end(self, out: Deltas) -> None:
        if self._route == _CALL and not self._args_sent:
            self.text(out, "{}")  # a call always carries an arguments object
        self._route = _CONTENT
        self.counting = False

    def flush(self) -> None:
        """Write the parts of the open delta; the next delta starts fresh."""
        delta = self._open
        if delta is None:
            return
        if self._parts:
            joined = "".join(self._parts)
            if delta.tool_calls:
                fn = delta.tool_calls[0].function
                if fn is not None:  # always: this router builds every call delta with one
                    fn.arguments = (fn.arguments or "") + joined
            elif delta.content is not None:
                delta.content += joined
            else:
                delta.reasoning_content = (delta.reasoning_content or "") + joined
        self._open, self._open_kind, self._parts = None, -1, []

    def _drop(self, name: str | None, reason: str) -> None:
        self.dropped.append(DroppedCall(name, reason))
        logger.info("tool call dropped: name=%r reason=%s", name, reason)
