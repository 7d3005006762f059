"""The router's machine as data: its states, what its lexers report, and the table between them.

Each text state has a lexer (``BaseResponseParser._lex_*``) that reads the buffered text from
where the router stands, emits the text before the next thing it recognizes on that state's
channel, and reports what it found as a ``Mark``; in ``TOOL`` the event is the block parser's
verdict.  ``ROUTING[state][mark]`` is the plan: a step (a router method, run once) and the state
after it.  Everything that decides a transition lives in this table; the lexers only
recognize, the steps only act (emit, open a block, move the token counter's bounds).

A state does not look for every mark: ``NEVER[state]`` declares the marks its lexer cannot
report, and ``check_routing`` (run at import) fails unless every state x mark has exactly one of
a plan or such a declaration.  ``RESUME`` as the next state means "the text state the block
came from" (the block's ``resume``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple


__all__ = ["State", "Mark", "Plan", "RESUME", "ROUTING", "NEVER", "RETURNS_TO", "WAITS", "STOPS", "check_routing",
           "describe_routing"]


class State(enum.IntEnum):  # IntEnum: members index the compiled table's tuples in C
    """Where the router stands (``BaseResponseParser.state`` gives the lower-case name)."""

    PLAIN_START = 0  # the reply's start, where a bare block may begin (a tool parser with ``bare_start``)
    PLAIN = 1  # content
    REASONING_START = 2  # the reply's start when it opens in reasoning: a leading open tag is dropped
    REASONING = 3
    TOOL = 4  # a block is open: its parser reads the text
    AFTER_BLOCK = 5  # a block ended: whitespace waits for what follows


class Mark(enum.IntEnum):
    """What a lexer recognized (markers, a bare start, the end of the buffered text) or a block's verdict."""

    REASONING_OPEN = 0  # the reasoning parser's open tag
    REASONING_CLOSE = 1  # its close tag (in content: a stray one, looked for only when it is dropped)
    FRAMING = 2  # the family's message framing (Kimi-K3's response element): dropped, it ends reasoning
    TOOL_OPEN = 3  # a tool open tag, or one with the template's ``block_lead`` before it
    PAYLOAD_OPEN = 4  # an open tag the tool parser reads as payload (Qwen3-Coder's bare ``<function=``)
    BARE_START = 5  # a bare-start character after the reply's leading whitespace
    TEXT = 6  # anything else where only a marker or a bare start would change the state
    END = 7  # no whole marker in the buffered text: it was text (a possible partial marker held)
    TEXT_END = 8  # as END, and that text was not only whitespace (at the reply's start, it ends the start)
    BLOCK_OPEN = 9  # the block parser consumed what it could; the block goes on
    BLOCK_CLOSED = 10
    BLOCK_REJECTED = 11  # never a call: its opening is text, what followed is read again
    BLOCK_TRUNCATED = 12  # the reply ended inside a block that is a call cut off: its markup is dropped


class Plan(NamedTuple):
    step: str  # a router method, without its leading underscore
    after: State | None  # None: RESUME


RESUME: Final = None
_OPENS: Final = frozenset(("open_block", "open_payload", "open_bare"))  # the steps that open a block
_PS: Final = State.PLAIN_START
_P: Final = State.PLAIN
_RS: Final = State.REASONING_START
_R: Final = State.REASONING
_T: Final = State.TOOL
_AB: Final = State.AFTER_BLOCK
_MARKERS: Final = (Mark.REASONING_OPEN, Mark.REASONING_CLOSE, Mark.FRAMING, Mark.TOOL_OPEN, Mark.PAYLOAD_OPEN)
_VERDICTS: Final = (Mark.BLOCK_OPEN, Mark.BLOCK_CLOSED, Mark.BLOCK_REJECTED, Mark.BLOCK_TRUNCATED)
# The marks after which the router waits for more text; after any other it reads on.  After
# WAITS it stays where it stands (their plans are checked to say so: the loop takes them as read).
WAITS: Final = (Mark.END, Mark.BLOCK_OPEN)
STOPS: Final = frozenset((*WAITS, Mark.TEXT_END))

ROUTING: Final[dict[State, dict[Mark, Plan]]] = {
    _PS: {
        Mark.BARE_START: Plan("open_bare", _T),
        Mark.TEXT: Plan("none", _P),  # the reply starts with text (or, at its end, only whitespace)
        Mark.END: Plan("none", _PS),  # only whitespace so far
    },
    _P: {
        Mark.REASONING_OPEN: Plan("open_reasoning", _R),
        Mark.REASONING_CLOSE: Plan("drop", _P),  # a stray close tag (after a call ended the reasoning)
        Mark.FRAMING: Plan("drop", _P),
        Mark.TOOL_OPEN: Plan("open_block", _T),
        Mark.PAYLOAD_OPEN: Plan("open_payload", _T),
        Mark.END: Plan("none", _P),
    },
    _RS: {
        Mark.REASONING_OPEN: Plan("leading_open", _R),  # dropped; text if text came before it
        Mark.REASONING_CLOSE: Plan("close_reasoning", _P),
        Mark.FRAMING: Plan("close_reasoning", _P),
        Mark.TOOL_OPEN: Plan("open_block", _T),
        Mark.PAYLOAD_OPEN: Plan("open_payload", _T),
        Mark.END: Plan("none", _RS),
        Mark.TEXT_END: Plan("none", _R),  # text came: a later open tag is text too
    },
    _R: {
        Mark.REASONING_CLOSE: Plan("close_reasoning", _P),
        Mark.FRAMING: Plan("close_reasoning", _P),
        Mark.TOOL_OPEN: Plan("open_block", _T),
        Mark.PAYLOAD_OPEN: Plan("open_payload", _T),
        Mark.END: Plan("none", _R),
    },
    _T: {
        Mark.BLOCK_OPEN: Plan("none", _T),
        Mark.BLOCK_CLOSED: Plan("end_block", _AB),
        Mark.BLOCK_REJECTED: Plan("replay_opening", RESUME),
        Mark.BLOCK_TRUNCATED: Plan("record_cut", _AB),
    },
    _AB: {
        Mark.TOOL_OPEN: Plan("drop_separator", RESUME),  # another block follows
        Mark.PAYLOAD_OPEN: Plan("drop_separator", RESUME),
        Mark.TEXT: Plan("none", RESUME),  # the whitespace is text of where the block came from
        Mark.END: Plan("none", _AB),  # whitespace, or a possible open tag, so far
    },
}

# The marks a state's lexer cannot report, and why.
NEVER: Final[dict[State, frozenset[Mark]]] = {
    # reads only whitespace and the character after it (the markers are PLAIN's to find)
    _PS: frozenset((*_MARKERS, Mark.TEXT_END, *_VERDICTS)),
    # every marker is looked for; a bare start, and where text ends the start, matter only at the start
    _P: frozenset((Mark.BARE_START, Mark.TEXT, Mark.TEXT_END, *_VERDICTS)),
    # every marker is looked for; text before one is reported with the marker (it decides a leading tag)
    _RS: frozenset((Mark.BARE_START, Mark.TEXT, *_VERDICTS)),
    # a reasoning open tag inside reasoning is text: not looked for
    _R: frozenset((Mark.REASONING_OPEN, Mark.BARE_START, Mark.TEXT, Mark.TEXT_END, *_VERDICTS)),
    # the block parser reads every character: only its verdicts come
    _T: frozenset((*_MARKERS, Mark.BARE_START, Mark.TEXT, Mark.END, Mark.TEXT_END)),
    # looks only for whitespace and an open tag after it (no lead: the whitespace is before it)
    _AB: frozenset((Mark.REASONING_OPEN, Mark.REASONING_CLOSE, Mark.FRAMING, Mark.BARE_START, Mark.TEXT_END,
                    *_VERDICTS)),
}

# The text state a block opened in each text state returns to (unless a call ends reasoning).
RETURNS_TO: Final = (_P, _P, _R, _R)


def check_routing(routing: Mapping[State, Mapping[Mark, Plan]], never: Mapping[State, Iterable[Mark]]) -> None:
    """Raise ValueError unless the table is whole and consistent."""
    problems = []
    for state in State:
        row, impossible = routing.get(state, {}), frozenset(never.get(state, ()))
        for mark in Mark:
            if (mark in row) == (mark in impossible):
                problems.append(f"{state.name} x {mark.name}: " + ("both a plan and NEVER" if mark in row else
                                                                   "neither a plan nor NEVER"))
        for mark, (step, after) in row.items():
            if after is RESUME and state not in (_T, _AB):
                problems.append(f"{state.name} x {mark.name}: only a block's end can resume")
            if (step in _OPENS) != (after is _T and state is not _T) or (step in _OPENS and state is _AB):
                problems.append(f"{state.name} x {mark.name}: a block is entered by an open step, from a text state")
    # The router takes these plans for granted (the routing loop, ``stream_chunk`` inside a block, the text lane).
    for state, row in routing.items():
        for mark in WAITS:
            if mark in row and row[mark] != Plan("none", state):
                problems.append(f"{state.name} x {mark.name}: the router assumes {Plan('none', state)}")
    if problems:
        raise ValueError("inconsistent routing table: " + "; ".join(problems))


check_routing(ROUTING, NEVER)


_WORDS: Final = {
    Mark.REASONING_OPEN: "reasoning open", Mark.REASONING_CLOSE: "reasoning close", Mark.FRAMING: "framing",
    Mark.TOOL_OPEN: "tool open", Mark.PAYLOAD_OPEN: "payload open", Mark.BARE_START: "bare start",
    Mark.TEXT: "text", Mark.END: "end", Mark.TEXT_END: "text end", Mark.BLOCK_OPEN: "open",
    Mark.BLOCK_CLOSED: "closed", Mark.BLOCK_REJECTED: "rejected", Mark.BLOCK_TRUNCATED: "truncated"}


def describe_routing(routing: Mapping[State, Mapping[Mark, Plan]] = ROUTING) -> str:
    """The table as the router's docstring shows it: per state, marks with the same plan on one line."""
    lines = []
    for state, row in routing.items():
        plans: dict[Plan, list[str]] = {}
        for mark, plan in row.items():
            plans.setdefault(plan, []).append(_WORDS[mark])
        cells = [f"{', '.join(marks)}: " + ("wait" if plan == Plan("none", state) else
                                            (plan.step + " -> " if plan.step != "none" else "-> ")
                                            + (plan.after.name if plan.after is not None else "RESUME"))
                 for plan, marks in plans.items()]
        lines += [f"{state.name if i == 0 else '':<17}{cell}" for i, cell in enumerate(cells)]
    return "\n".join(lines)
