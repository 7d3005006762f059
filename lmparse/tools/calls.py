"""CallEmitter: call identity, name filtering and the deltas of one response's tool calls.

Every tool parser and Harmony's router write calls through one emitter, so the output
contract lives here once: the first delta of an accepted call carries id, type and
name; argument text seen before the name is held and released right after it; a name
the request does not expose drops the call (recorded in ``dropped``) without taking an
index, so accepted calls keep dense indices from 0; argument fragments of one call in
one chunk are joined into one delta (call ``flush`` when the chunk ends).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

from ..messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall, arguments_delta

__all__ = ["CallEmitter", "DroppedCall", "Deltas", "new_call_id", "NO_CALL", "UNNAMED", "ACCEPTED", "DROPPED",
           "TRUNCATED_HEAD"]

logger = logging.getLogger("lmparse")

Deltas = list[tuple[DeltaMessage, bool]]

# Where the current call stands.
NO_CALL, UNNAMED, ACCEPTED, DROPPED = range(4)
# Why markup cut off by the end of the reply reached no client (see ``CallEmitter.cut``).
TRUNCATED_HEAD = "truncated: the reply ended before the call's name was complete"


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


class DroppedCall:
    """A call the model wrote that no client saw, and why.

    ``text`` is the markup itself when the record stands for syntax that the end of the
    reply cut off before anything of it reached a client (a block opened but its call not
    yet named, a Harmony header without its ``<|message|>``); None otherwise."""

    __slots__ = ("name", "reason", "text")

    def __init__(self, name: str | None, reason: str, text: str | None = None) -> None:
        self.name = name
        self.reason = reason
        self.text = text

    def __repr__(self) -> str:
        text = "" if self.text is None else f", text={self.text!r}"
        return f"DroppedCall(name={self.name!r}, reason={self.reason!r}{text})"


class CallEmitter:
    """The calls of one response, one at a time: ``begin``, ``name``, ``arguments``, ``end``."""

    __slots__ = ("_allowed", "_max_calls", "_id_factory", "dropped", "calls_emitted", "state", "_held", "_index",
                 "_args_sent", "_merge", "_merge_fn", "parts")

    def __init__(self, allowed: frozenset[str] | None, id_factory: Callable[[], str] = new_call_id,
                 max_calls: int | None = None) -> None:
        self._allowed = allowed  # None: every name is accepted
        self._max_calls = max_calls  # calls beyond it are dropped (``parallel_tool_calls: false``)
        self._id_factory = id_factory
        self.dropped: list[DroppedCall] = []
        self.calls_emitted = 0
        self.state = NO_CALL
        self._held: list[str] = []  # argument text that came before the name
        self._index = -1
        self._args_sent = False
        self._merge: DeltaMessage | None = None  # this chunk's delta of the current call
        self._merge_fn: DeltaFunctionCall | None = None  # and its function part
        self.parts: list[str] = []  # argument text still to be joined into it (``flush``)

    @property
    def named(self) -> bool:
        """The current call has its name: accepted, or dropped for it."""
        return self.state == ACCEPTED or self.state == DROPPED

    def begin(self) -> None:
        """A call starts; its name is not known yet."""
        self.state = UNNAMED
        self._held = []
        self._index = -1
        self._args_sent = False

    def name(self, deltas: Deltas, name: str, call_id: str | None = None) -> None:
        """The current call's name: accept it (the call's first delta) or drop the call.
        Only the first name of a call counts."""
        if self.state != UNNAMED:
            return
        if self._allowed is not None and name not in self._allowed:
            self.drop(name, "not among the request's tools")
            return
        if self._max_calls is not None and self.calls_emitted >= self._max_calls:
            self.drop(name, "parallel_tool_calls is false: only the first call is kept")
            return
        self.state = ACCEPTED
        self._index = index = self.calls_emitted
        self.calls_emitted += 1
        held = "".join(self._held) if self._held else None
        self._held = []
        self._args_sent = held is not None
        if self.parts:
            self.flush()
        self._merge_fn = fn = DeltaFunctionCall(name, held)
        call = DeltaToolCall(index, call_id or self._id_factory(), "function", fn)
        self._merge = delta = DeltaMessage(None, None, [call])
        deltas.append((delta, True))

    def arguments(self, deltas: Deltas, text: str) -> None:
        """Argument text of the current call: sent, held until the name, or dropped with the call."""
        if not text:
            return
        state = self.state
        if state == ACCEPTED:
            self._args_sent = True
            if deltas and deltas[-1][0] is self._merge:
                self.parts.append(text)  # same call, same chunk: one delta
                return
            if self.parts:
                self.flush()
            self._merge = delta = arguments_delta(self._index, text)
            self._merge_fn = delta.tool_calls[0].function  # type: ignore[index]
            deltas.append((delta, True))
        elif state == UNNAMED:
            self._held.append(text)

    def arguments_run(self, deltas: Deltas, text: str) -> None:
        """``arguments`` for a fresh chunk whose only fragment this is (the fast lane)."""
        if self.state == ACCEPTED:
            self._args_sent = True
            deltas.append((arguments_delta(self._index, text), True))

    def end(self, deltas: Deltas | None) -> None:
        """The current call ends: an accepted call always carries an arguments object;
        a call that never got its name is recorded as dropped."""
        state = self.state
        if state == ACCEPTED and not self._args_sent and deltas is not None:
            self.arguments(deltas, "{}")
        elif state == UNNAMED:
            self.drop(None, "no function name")
        self.state = NO_CALL

    def abandon(self) -> None:
        """The current call never was (its block turned back into text): no record."""
        self.state = NO_CALL
        self._held = []

    def drop(self, name: str | None, reason: str) -> None:
        """The current call reaches no client; the record says why."""
        self.state = DROPPED
        self._held = []
        self.dropped.append(DroppedCall(name, reason))
        logger.info("tool call dropped: name=%r reason=%s", name, reason)

    def cut(self, text: str | None, reason: str = TRUNCATED_HEAD) -> None:
        """The reply ended before the current call (if one began) got its name: there is no
        call, and the record keeps the markup read so far (``text``, when its owner kept it)."""
        self.state = NO_CALL
        self._held = []
        self.dropped.append(DroppedCall(None, reason, text))
        logger.info("markup cut off by the end of the reply: %s", reason)

    def flush(self) -> None:
        """Join the pending argument text into this chunk's delta (call at the chunk's end):
        the delta is then the caller's, and no longer held here (it may carry a whole argument)."""
        fn = self._merge_fn
        if self.parts and fn is not None:
            fn.arguments = (fn.arguments or "") + "".join(self.parts)
        self.parts = []
        self._merge = self._merge_fn = None
