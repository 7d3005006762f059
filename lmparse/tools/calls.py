"""CallEmitter: call identity, name filtering and the events of one response's tool calls.

Every tool parser and Harmony's router write calls through one emitter, so the output
contract lives here once: an accepted call starts with ``CallStart`` (index, id, name);
argument text seen before the name is held and released right after it; a name the
request does not expose drops the call (a ``DroppedCall``, also kept in ``dropped``)
without taking an index, so accepted calls keep dense indices from 0; an accepted call
always carries an arguments object before its ``CallEnd``.  The events go to the chunk's
list; the edge (``lmparse.messages.deltas_of``) makes deltas of them.
"""

from __future__ import annotations

from typing import Final

import logging
import secrets
from collections.abc import Callable

from ..events import CallArgs, CallEnd, CallStart, DroppedCall, Events
from .json_guard import JsonGuard, plain_string_body

__all__ = ["CallEmitter", "DroppedCall", "Events", "new_call_id", "NO_CALL", "UNNAMED", "ACCEPTED", "DROPPED",
           "TRUNCATED_HEAD",
           "MALFORMED_ARGUMENTS", "TRUNCATED_ARGUMENTS"]

logger = logging.getLogger("lmparse")

# Where the current call stands.
NO_CALL: Final = 0
UNNAMED: Final = 1
ACCEPTED: Final = 2
DROPPED: Final = 3
# Why markup cut off by the end of the reply reached no client (see ``CallEmitter.cut``).
TRUNCATED_HEAD: Final = "truncated: the reply ended before the call's name was complete"
# Why argument text of an accepted call reached no client (issue 23, rule 6; ``JsonGuard``).
MALFORMED_ARGUMENTS: Final = "malformed: the arguments broke off as JSON; the rest is markup"
TRUNCATED_ARGUMENTS: Final = "truncated: the reply ended inside the call's arguments"


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


class CallEmitter:
    """The calls of one response, one at a time: ``begin``, ``name``, ``arguments``, ``end``."""

    __slots__ = ("_allowed", "_max_calls", "_id_factory", "dropped", "calls_emitted", "state", "_held", "_index",
                 "_args_sent", "_guard", "_name", "_spilled",
                 "verbatim", "json_arguments", "_trial", "_tried")

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
        self._guard = JsonGuard()
        self._name = ""
        self._spilled: list[str] = []  # argument text that broke the JSON grammar, and all after it
        # The current call's arguments are the reply's text as written (JSON dialects set it
        # per call): what broke is then markup the ``dropped`` record keeps; converted
        # arguments are the parser's own text, and the record keeps none.
        self.verbatim = False
        # The current call's arguments are a JSON object by design, so they pass through the
        # guard. False for a call whose body is not JSON by design (gpt-oss's built-in
        # ``python``, whose message is code): its text goes out as written (set per call,
        # after ``begin``).
        self.json_arguments = True
        # The guard as ``try_run`` left it after reading the fast lane's text: ``run``
        # takes it instead of reading the same text twice.
        self._trial: JsonGuard | None = None
        # The guard after reading text the fast lane then did not take, with what it let out:
        # the slow path that gets the same text next takes it instead of reading it again.
        self._tried: tuple[str, JsonGuard, str, str] | None = None

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
        self._guard = JsonGuard()
        self._trial = self._tried = None
        self._spilled = []
        self.verbatim = False
        self.json_arguments = True

    def name(self, out: Events, name: str, call_id: str | None = None) -> None:
        """The current call's name: accept it (``CallStart``) or drop the call.
        Only the first name of a call counts."""
        if self.state != UNNAMED:
            return
        if self._allowed is not None and name not in self._allowed:
            self.drop(out, name, "not among the request's tools")
            return
        if self._max_calls is not None and self.calls_emitted >= self._max_calls:
            self.drop(out, name, "parallel_tool_calls is false: only the first call is kept")
            return
        self.state = ACCEPTED
        self._name = name
        self._index = index = self.calls_emitted
        self.calls_emitted += 1
        out.append(CallStart(index, call_id or self._id_factory(), name))
        if self._held:
            held = "".join(self._held)
            self._held = []
            self._send(out, held)

    def arguments(self, out: Events, text: str) -> None:
        """Argument text of the current call: sent, held until the name, or dropped with the call."""
        if not text:
            return
        state = self.state
        if state == ACCEPTED:
            self._send(out, text)
        elif state == UNNAMED:
            self._held.append(text)

    def whole_object(self, out: Events, text: str) -> None:
        """The current call's arguments, one JSON object the caller has proven valid (the C
        decoder read it): no grammar step when they are all the call has."""
        if self.state == ACCEPTED and self.json_arguments and self._guard.take_whole():
            self._args_sent = True
            out.append(CallArgs(self._index, text))
        else:
            self.arguments(out, text)

    @property
    def in_value_string(self) -> bool:
        """The accepted call's guard stands inside a value string with nothing held."""
        return self.state == ACCEPTED and self._guard.plain

    def member(self, out: Events, head: str, value: str) -> None:
        """One whole member of the arguments object the caller wrote: ``head`` is its
        ``{"key": `` or ``, "key": ``, ``value`` JSON the caller converted.  A member whose
        value is a scalar or a string needs no grammar step; others are read as text."""
        if self.state == ACCEPTED and self.json_arguments and self._guard.take_member(head[0] == "{", value):
            self._tried = None
            self._args_sent = True
            out.append(CallArgs(self._index, head + value))
        else:
            self.arguments(out, head + value)
            self.value_end(out)

    def string_body(self, out: Events, text: str) -> None:
        """Argument text the caller made a JSON string body (whole escapes, no closing quote):
        inside a value string with nothing held it goes out with no grammar step."""
        if self.state == ACCEPTED and self._guard.plain:
            if text:
                self._args_sent = True
                out.append(CallArgs(self._index, text))
        else:
            self.arguments(out, text)

    def _send(self, out: Events, text: str) -> None:
        """Argument text of the accepted call, through its ``JsonGuard``: what keeps it a
        JSON object goes out; text that broke it is kept for the call's ``dropped`` record."""
        if not self.json_arguments:
            self._args_sent = True
            out.append(CallArgs(self._index, text))
            return
        tried = self._tried
        if tried is not None and tried[0] == text:
            _, guard, good, bad = tried
            self._guard = guard
        else:
            guard = self._guard
            good, bad = guard.feed(text)
        self._tried = None
        if good:
            self._args_sent = True
            out.append(CallArgs(self._index, good))
        if bad:
            self._spilled.append(bad)

    def value_end(self, out: Events) -> None:
        """The value just written is whole (the dialect met its close tag): a typed scalar
        the guard held because more digits could follow goes out now, not with what follows."""
        if self.state == ACCEPTED and self.json_arguments:
            self._tried = None
            good = self._guard.end_value()
            if good:
                self._args_sent = True
                out.append(CallArgs(self._index, good))

    def try_run(self, text: str) -> str | None:
        """What of ``text`` goes out if a block's fast lane takes it whole as argument text
        (the guard may hold its end back); None when the lane must not take it (it breaks
        the object: the slow path records that).  ``run`` commits it."""
        if self.state != ACCEPTED or not self.json_arguments:
            return text
        self._trial = self._tried = None
        if self._guard.plain and plain_string_body(text):
            return text  # (inside a value string: the guard stands as it is)
        guard = self._guard
        if guard.broken:
            return None
        trial = guard.copy()
        good, bad = trial.feed(text)
        self._tried = (text, trial, good, bad)
        if bad:
            return None
        self._trial = trial
        return good

    def run(self, good: str) -> int:
        """A block's fast lane took the text ``try_run`` was given; ``good`` is what it said
        goes out, a delta the edge makes itself: the current call's index, or -1 when
        nothing goes out (the call is not accepted, or nothing was let out)."""
        if self.state != ACCEPTED:
            return -1
        trial = self._trial
        if trial is not None:  # (None: the text left the guard as it stands)
            self._guard = trial
            self._trial = self._tried = None
        if not good:
            return -1
        self._args_sent = True
        return self._index

    def string_run(self, body: str) -> int | None:
        """A fast lane's JSON string-body text (whole characters and escapes, no closing quote)
        inside a value string of the accepted call with nothing held: it leaves the guard as
        it stands, so the hot path takes no grammar step.  The call's index, -1 for empty
        text; None when the guard is not there (the slow path takes the text)."""
        if self.state == ACCEPTED and self._guard.plain:
            if body:
                self._args_sent = True
                return self._index
            return -1
        return None

    def end(self, out: Events) -> None:
        """The current call ends: an accepted call always carries an arguments object;
        a call that never got its name is recorded as dropped."""
        state = self.state
        if state == ACCEPTED and not self.json_arguments:  # (not JSON by design: as written)
            if not self._args_sent:
                out.append(CallArgs(self._index, "{}"))
            out.append(CallEnd(self._index))
        elif state == ACCEPTED:
            self._tried = None
            closing, left = self._guard.close()
            if not self._args_sent:
                closing = "{}"
            if closing:
                out.append(CallArgs(self._index, closing))
            reason = MALFORMED_ARGUMENTS if self._spilled else TRUNCATED_ARGUMENTS
            if left.strip():
                self._spilled.insert(0, left)
            if self._spilled:
                spilled = "".join(self._spilled) if self.verbatim else None
                self.record(out, DroppedCall(self._name, reason, spilled))
                self._spilled = []
            out.append(CallEnd(self._index))
        elif state == UNNAMED:
            self.drop(out, None, "no function name")
        self.state = NO_CALL

    def abandon(self) -> None:
        """The current call never was (its block turned back into text): no record."""
        self.state = NO_CALL
        self._held = []

    def drop(self, out: Events, name: str | None, reason: str) -> None:
        """The current call reaches no client; the record says why."""
        self.drop_record(out, DroppedCall(name, reason))

    def drop_record(self, out: Events, record: DroppedCall) -> None:
        """``drop``, with the record made by the caller."""
        self.state = DROPPED
        self._held = []
        self.record(out, record)
        logger.info("tool call dropped: name=%r reason=%s", record.name, record.reason)

    def cut(self, out: Events, text: str | None, reason: str = TRUNCATED_HEAD) -> None:
        """The reply ended before the current call (if one began) got its name: there is no
        call, and the record keeps the markup read so far (``text``, when its owner kept it)."""
        self.state = NO_CALL
        self._held = []
        self.record(out, DroppedCall(None, reason, text))
        logger.info("markup cut off by the end of the reply: %s", reason)

    def record(self, out: Events, dropped: DroppedCall) -> None:
        """A drop record: this chunk's event, and the response's ``dropped``."""
        self.dropped.append(dropped)
        out.append(dropped)
