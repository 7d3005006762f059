"""Harmony's framing: the four framing states and the one table both input paths follow.

A lexer (``text.py`` for literal markers, ``tokens.py`` for token ids) turns its input into
events ``(Event, payload)``; the ``Framer`` looks each one up in ``FRAMING`` and runs the
steps it names, which call the path's ``Messages`` (how that path reads a header and decodes
a body) and the ``Router`` (content events).  Everything that decides a transition lives in the table
(h11's rule 1); the lexers only recognize markers.

``<|constrain|>`` is text wherever a header or body is open; ``<|message|>`` is text inside a
body.  ``RECIPIENT`` is the reply's first text when it starts like ``to=functions.NAME``: the
first message's header may name its recipient before its channel, as the official template
renders it; lexers send it only in ``OPENING``.  A header that the grammar rejects, or that
another message's start or a stop interrupts, is not syntax after all: its text goes back as
content, so a bad sequence loses no text and never raises out of ``stream_chunk``.  A header
that the end of the reply cuts off (``<|channel|>analysis`` with no ``<|message|>``) is
syntax: its text goes to ``dropped`` with the reason, never to content or reasoning.
"""

from __future__ import annotations

import enum
from typing import Final, Generic, Protocol, TYPE_CHECKING, TypeVar
from collections.abc import Callable

from ...events import Events
from .markers import CALL, CHANNEL, CONSTRAIN, END, MARKER_IDS, MESSAGE, RETURN, START, STOPS

if TYPE_CHECKING:
    from .router import Router

__all__ = [
    "START", "CHANNEL", "MESSAGE", "CONSTRAIN", "END", "CALL", "RETURN", "STOPS", "MARKER_IDS",
    "MARKER_EVENTS", "Framing", "Event", "FRAMING", "Messages", "Framer",
]



class Framing(enum.IntEnum):  # IntEnum: hashed in C, these key every event's lookup
    """Where the framer is: before the first message, in a header, in a body, between messages."""

    OPENING = 0
    HEADER = 1
    BODY = 2
    BETWEEN = 3


class Event(enum.IntEnum):
    START = 0
    CHANNEL = 1
    MESSAGE = 2
    CONSTRAIN = 3
    STOP = 4  # <|end|>, <|call|>, <|return|>
    RECIPIENT = 5  # the reply opens with ` to=`: a header whose recipient comes first
    TEXT = 6
    EOS = 7


MARKER_EVENTS: Final = {
    START: Event.START, CHANNEL: Event.CHANNEL, MESSAGE: Event.MESSAGE, CONSTRAIN: Event.CONSTRAIN,
    END: Event.STOP, CALL: Event.STOP, RETURN: Event.STOP,
}

# Module-level names for the members: an enum class's attribute lookup is slow on hot paths.
_O: Final = Framing.OPENING
_H: Final = Framing.HEADER
_B: Final = Framing.BODY
_N: Final = Framing.BETWEEN
_TEXT: Final = Event.TEXT
Plan = tuple[tuple[str, ...], Framing]

# state -> event -> (steps, next state).  Steps are Framer methods, run in order with the
# event's payload.  `open_header` follows <|start|> (the header names the role);
# `open_assistant_header` opens one whose role the prompt gave (the reply's first message,
# or a message that omits <|start|>).
FRAMING: Final[dict[Framing, dict[Event, Plan]]] = {
    _O: {
        Event.START: (("open_header",), _H),
        Event.CHANNEL: (("open_assistant_header", "header_text"), _H),
        Event.CONSTRAIN: (("open_assistant_header", "header_text"), _H),
        Event.RECIPIENT: (("open_assistant_header", "header_text"), _H),
        Event.MESSAGE: (("open_assistant_header", "finish_header"), _B),
        Event.STOP: ((), _N),
        Event.TEXT: (("plain_body",), _B),  # not Harmony at all: a server that dropped the markers
        Event.EOS: ((), _N),
    },
    _H: {
        Event.START: (("header_to_content", "open_header"), _H),
        Event.CHANNEL: (("header_text",), _H),
        Event.CONSTRAIN: (("header_text",), _H),
        Event.MESSAGE: (("finish_header",), _B),
        Event.STOP: (("header_to_content",), _N),
        Event.TEXT: (("header_text",), _H),
        Event.EOS: (("cut_header",), _N),
    },
    _B: {
        Event.START: (("cut_body", "open_header"), _H),
        Event.CHANNEL: (("cut_body", "open_assistant_header", "header_text"), _H),
        Event.CONSTRAIN: (("body_text",), _B),
        Event.MESSAGE: (("body_text",), _B),
        Event.STOP: (("end_body",), _N),
        Event.TEXT: (("body_text",), _B),
        Event.EOS: (("cut_body",), _N),
    },
    _N: {
        Event.START: (("open_header",), _H),
        Event.CHANNEL: (("open_assistant_header", "header_text"), _H),
        Event.CONSTRAIN: (("plain_body",), _B),
        Event.MESSAGE: (("open_assistant_header", "finish_header"), _B),
        Event.STOP: ((), _N),  # a stray stop is syntax, not text
        Event.TEXT: (("plain_body",), _B),  # text outside any message
        Event.EOS: ((), _N),
    },
}


def text_events(state: Framing) -> frozenset[Event]:
    """The events that are merely text in ``state``: a lexer need not look for their markers there."""
    return frozenset(e for e, (steps, after) in FRAMING[state].items() if after is state and steps in _TEXT_STEPS)


_TEXT_STEPS: Final = (("header_text",), ("body_text",))

P = TypeVar("P")  # a payload: the marker's or text's own spelling (str), or token ids
P_contra = TypeVar("P_contra", contravariant=True)


class Messages(Protocol[P_contra]):
    """How one input path reads headers and decodes bodies (``text.py``, ``tokens.py``)."""

    verbatim_bodies: bool  # ``body_text`` returns its payload unchanged (the text path)

    def open_header(self, role_known: bool) -> None: ...

    def add_header(self, payload: P_contra) -> None: ...

    def close_header(self) -> tuple[str | None, str | None] | str:
        """``(channel, recipient)`` of the header, or its own text when the grammar rejects it;
        either way a body starts."""
        ...

    def drop_header(self) -> str:
        """The text of a header that never completed."""
        ...

    def open_body(self) -> None: ...

    def body_text(self, payload: P_contra, reasoning: bool) -> str: ...

    def end_body(self, stop: P_contra | None) -> str:
        """The body's undelivered rest; ``stop`` is None when the body was cut off."""
        ...


class Framer(Generic[P]):
    """Runs ``FRAMING`` for one response: events in, router calls out."""

    __slots__ = ("state", "channel", "recipient", "_row", "_router", "_messages", "_verbatim")

    def __init__(self, router: Router, messages: Messages[P]) -> None:
        self.state = Framing.OPENING
        self._row = _PLANS[Framing.OPENING]  # the plans of the current state
        self.channel: str | None = None  # of the message whose body is open
        self.recipient: str | None = None
        self._router = router
        self._messages = messages
        self._verbatim = messages.verbatim_bodies  # body text is already text (no decoding)

    def handle(self, event: Event, payload: P | None, out: Events) -> None:
        steps, after, self._row = self._row[event]
        for step in steps:
            step(self, payload, out)
        self.state = after

    def text(self, payload: P, out: Events) -> None:
        """``handle(Event.TEXT, payload)``, the hot path: in a body the table's plan for text
        is ``body_text`` and the state stays (checked below, where the table is compiled)."""
        if self.state is _B:
            router = self._router
            if self._verbatim:
                router.text(out, payload)  # type: ignore[arg-type]  # verbatim: the payload is str
            else:
                router.text(out, self._messages.body_text(payload, router.counting))
        else:
            self.handle(_TEXT, payload, out)

    # ---- the steps FRAMING names --------------------------------------------------------

    def open_header(self, payload: P | None, out: Events) -> None:
        self._messages.open_header(False)

    def open_assistant_header(self, payload: P | None, out: Events) -> None:
        self._messages.open_header(True)

    def header_text(self, payload: P | None, out: Events) -> None:
        if payload is not None:
            self._messages.add_header(payload)

    def finish_header(self, payload: P | None, out: Events) -> None:
        verdict = self._messages.close_header()
        if isinstance(verdict, str):  # rejected: the header's text is content
            self._begin(out, None, None)
            self._router.text(out, verdict)
        else:
            self._begin(out, *verdict)

    def header_to_content(self, payload: P | None, out: Events) -> None:
        """The header never completed: its text goes back as content."""
        text = self._messages.drop_header()
        if text:
            router = self._router
            router.begin(out, None, None)
            router.text(out, text)
            router.end(out)

    def cut_header(self, payload: P | None, out: Events) -> None:
        """The reply ended inside a header: syntax cut off, kept in ``dropped``."""
        text = self._messages.drop_header()
        if text:
            self._router.cut(out, text)

    def plain_body(self, payload: P | None, out: Events) -> None:
        self._begin(out, None, None)
        self._messages.open_body()
        self.body_text(payload, out)

    def body_text(self, payload: P | None, out: Events) -> None:
        if payload is not None:
            router = self._router
            router.text(out, self._messages.body_text(payload, router.counting))

    def end_body(self, payload: P | None, out: Events) -> None:
        self._end(out, self._messages.end_body(payload))

    def cut_body(self, payload: P | None, out: Events) -> None:
        self._end(out, self._messages.end_body(None))

    def _begin(self, out: Events, channel: str | None, recipient: str | None) -> None:
        self.channel, self.recipient = channel, recipient
        self._router.begin(out, channel, recipient)

    def _end(self, out: Events, tail: str) -> None:
        self._router.text(out, tail)
        self._router.end(out)
        self.channel = self.recipient = None


Step = Callable[..., None]  # a Framer method: (framer, payload, out)
Row = dict[Event, tuple[tuple[Step, ...], Framing, "Row"]]
# FRAMING compiled: each step name resolved to its function, each next state to its row.
_PLANS: Final[dict[Framing, Row]] = {state: {} for state in FRAMING}
for _state, _row in FRAMING.items():
    for _event, (_steps, _after) in _row.items():
        _PLANS[_state][_event] = (tuple(getattr(Framer, s) for s in _steps), _after, _PLANS[_after])
# Framer.text takes the body's text plan for granted: keep it in step with the table.
assert FRAMING[Framing.BODY][Event.TEXT] == (("body_text",), Framing.BODY)
