"""What a parser decided about the reply, as values: the content event vocabulary.

Every layer of a response parser below its edge -- the text lane and lexers, the tool
dialects through their ``CallEmitter``, Harmony's router -- appends events to the chunk's
``Events`` list and returns how much it consumed and a status.  None of them builds an
OpenAI delta or merges one into another: ``lmparse.messages.deltas_of`` does that once, at
the edge (``stream_chunk``)::

    Text(channel, text)              text of the reply on CONTENT or REASONING
    CallStart(index, id, name)       an accepted call begins: its dense index, id and name
    CallArgs(index, text)            argument text of call ``index`` (JSON, as it is read)
    CallEnd(index)                   call ``index`` is complete (its arguments are whole)
    DroppedCall(name, reason, text)  markup no client sees, and why (``dropped`` keeps them all)

Events are values: built once, never changed (``DroppedCall`` of a Harmony message to a
built-in tool the request does not offer is the one record whose ``text`` fills in as the
message streams).  A chunk's events are in the order the reply wrote them, so an edge may
join neighbours (two texts of one channel, a call's start and its first arguments) without
reordering anything.
"""

from __future__ import annotations

from typing import Final

import enum

__all__ = ["Channel", "CONTENT", "REASONING", "Text", "CallStart", "CallArgs", "CallEnd", "DroppedCall", "Event",
           "Events"]


class Channel(enum.Enum):
    CONTENT = "content"
    REASONING = "reasoning"


CONTENT: Final = Channel.CONTENT
REASONING: Final = Channel.REASONING


class Text:
    __slots__ = ("channel", "text")

    def __init__(self, channel: Channel, text: str) -> None:
        self.channel = channel
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and (self.channel, self.text) == (other.channel, other.text)

    def __repr__(self) -> str:
        return f"Text({self.channel.name}, {self.text!r})"


class CallStart:
    __slots__ = ("index", "id", "name")

    def __init__(self, index: int, id: str, name: str) -> None:
        self.index = index
        self.id = id
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallStart) and (self.index, self.id, self.name) == (other.index, other.id, other.name)

    def __repr__(self) -> str:
        return f"CallStart({self.index}, {self.id!r}, {self.name!r})"


class CallArgs:
    __slots__ = ("index", "text")

    def __init__(self, index: int, text: str) -> None:
        self.index = index
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallArgs) and (self.index, self.text) == (other.index, other.text)

    def __repr__(self) -> str:
        return f"CallArgs({self.index}, {self.text!r})"


class CallEnd:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallEnd) and self.index == other.index

    def __repr__(self) -> str:
        return f"CallEnd({self.index})"


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


Event = Text | CallStart | CallArgs | CallEnd | DroppedCall
Events = list[Event]
