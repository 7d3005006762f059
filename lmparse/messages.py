"""The normalized output contract: OpenAI-shaped deltas and complete messages.

Plain ``__slots__`` classes: they are created on the hot path, once per emitted
fragment, so they carry no validation and no pydantic.  ``to_dict()`` gives the
OpenAI wire shape with unset keys omitted.
"""

from __future__ import annotations

from typing import Any, Final

from ._mypyc import compiled
from .events import CONTENT, CallArgs, CallStart, Channel, Events, Text

__all__ = [
    "Deltas",
    "deltas_of",
    "arguments_delta",
    "DeltaFunctionCall",
    "DeltaToolCall",
    "DeltaMessage",
    "FunctionCall",
    "ToolCall",
    "ParsedMessage",
]


class DeltaFunctionCall:
    """The function part of a tool-call fragment: the name (first fragment only) and/or more
    argument text (JSON, to be appended to what came before)."""

    __slots__ = ("name", "arguments")

    def __init__(self, name: str | None = None, arguments: str | None = None) -> None:
        self.name = name
        self.arguments = arguments

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI ``function`` object of a streamed call, unset keys omitted."""
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.arguments is not None:
            out["arguments"] = self.arguments
        return out

    def __repr__(self) -> str:
        return f"DeltaFunctionCall(name={self.name!r}, arguments={self.arguments!r})"


class DeltaToolCall:
    """One fragment of one tool call; the first fragment of an index carries id, type, name."""

    __slots__ = ("index", "id", "type", "function")

    def __init__(
        self,
        index: int,
        id: str | None = None,
        type: str | None = None,
        function: DeltaFunctionCall | None = None,
    ) -> None:
        self.index = index
        self.id = id
        self.type = type
        self.function = function

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls[]`` entry of a delta, unset keys omitted."""
        out: dict[str, Any] = {"index": self.index}
        if self.id is not None:
            out["id"] = self.id
        if self.type is not None:
            out["type"] = self.type
        if self.function is not None:
            out["function"] = self.function.to_dict()
        return out

    def __repr__(self) -> str:
        return f"DeltaToolCall(index={self.index}, id={self.id!r}, type={self.type!r}, function={self.function!r})"


class DeltaMessage:
    """One streamed delta: any of content, reasoning_content and tool_calls."""

    __slots__ = ("content", "reasoning_content", "tool_calls")

    def __init__(
        self,
        content: str | None = None,
        reasoning_content: str | None = None,
        tool_calls: list[DeltaToolCall] | None = None,
    ) -> None:
        self.content = content
        self.reasoning_content = reasoning_content
        self.tool_calls = tool_calls

    def to_dict(self, reasoning_field: str = "reasoning_content") -> dict[str, Any]:
        """The OpenAI ``delta`` object, unset keys omitted; reasoning under ``reasoning_field``."""
        out: dict[str, Any] = {}
        if self.reasoning_content is not None:
            out[reasoning_field] = self.reasoning_content
        if self.content is not None:
            out["content"] = self.content
        if self.tool_calls:
            out["tool_calls"] = [tc.to_dict() for tc in self.tool_calls]
        return out

    def __repr__(self) -> str:
        return (
            f"DeltaMessage(content={self.content!r}, reasoning_content={self.reasoning_content!r}, "
            f"tool_calls={self.tool_calls!r})"
        )


_new: Final = object.__new__
_COMPILED: Final = compiled(DeltaMessage.to_dict)


def arguments_delta(index: int, arguments: str) -> DeltaMessage:
    """``DeltaMessage(tool_calls=[DeltaToolCall(index, function=DeltaFunctionCall(arguments=...))])``,
    the streamed fragment of a call's arguments, built without the three ``__init__`` calls
    (a third of a small chunk's cost).  Every slot is set here: a slot added to one of the
    classes must be added here too (``tests/test_messages.py`` checks).  Compiled, the
    constructors are cheap, and ``object.__new__`` may not make these classes."""
    if _COMPILED:
        return DeltaMessage(None, None, [DeltaToolCall(index, None, None, DeltaFunctionCall(None, arguments))])
    fn = _new(DeltaFunctionCall)
    fn.name, fn.arguments = None, arguments
    call = _new(DeltaToolCall)
    call.index, call.id, call.type, call.function = index, None, None, fn
    delta = _new(DeltaMessage)
    delta.content, delta.reasoning_content, delta.tool_calls = None, None, [call]
    return delta


_NO_DELTA: Final = DeltaMessage()  # (``parts`` is empty until there is a delta)
# What ``stream_chunk`` returns: each delta, and whether it carries tool-call data.
Deltas = list[tuple[DeltaMessage, bool]]


def deltas_of(events: Events) -> Deltas:
    """One chunk's events as OpenAI-shaped deltas: the edge, the one place deltas are built.

    Neighbouring texts of one channel are one delta; a call's start and the argument text
    right after it are one delta (the first of the call: id, type, name, maybe arguments), and
    so are neighbouring argument texts of one call.  Call ends and drop records have none."""
    out: Deltas = []
    channel: Channel | None = None  # what the last delta collects: text of this channel,
    call = -1  # or the arguments of this call
    delta = _NO_DELTA
    parts: list[str] = []  # more text for it, joined when it closes
    for event in events:
        if isinstance(event, CallArgs):
            if event.index == call:
                parts.append(event.text)
                continue
            if parts:
                _join(delta, parts)
                parts = []
            channel, call = None, event.index
            delta = arguments_delta(call, event.text)
            out.append((delta, True))
        elif isinstance(event, Text):
            if event.channel is channel:
                parts.append(event.text)
                continue
            if parts:
                _join(delta, parts)
                parts = []
            channel, call = event.channel, -1
            delta = DeltaMessage(event.text) if channel is CONTENT else DeltaMessage(None, event.text)
            out.append((delta, False))
        elif isinstance(event, CallStart):
            if parts:
                _join(delta, parts)
                parts = []
            channel, call = None, event.index
            head = DeltaToolCall(call, event.id, "function", DeltaFunctionCall(event.name, None))
            delta = DeltaMessage(None, None, [head])
            out.append((delta, True))
    if parts:
        _join(delta, parts)
    return out


def _join(delta: DeltaMessage, parts: list[str]) -> None:
    """The rest of ``delta``'s text, after the piece it was made with."""
    more = "".join(parts)
    if delta.tool_calls:
        fn = delta.tool_calls[0].function
        if fn is not None:  # (``deltas_of`` made it with one)
            fn.arguments = (fn.arguments or "") + more
    elif delta.content is not None:
        delta.content += more
    else:
        delta.reasoning_content = (delta.reasoning_content or "") + more


class FunctionCall:
    """A complete call's function: its name and its arguments as one JSON text."""

    __slots__ = ("name", "arguments")

    def __init__(self, name: str, arguments: str) -> None:
        self.name = name
        self.arguments = arguments

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI ``function`` object of a message's tool call."""
        return {"name": self.name, "arguments": self.arguments}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FunctionCall) and (self.name, self.arguments) == (other.name, other.arguments)

    def __repr__(self) -> str:
        return f"FunctionCall(name={self.name!r}, arguments={self.arguments!r})"


class ToolCall:
    """A complete tool call of a parsed message: its id (``call_...``), ``type`` and function."""

    __slots__ = ("id", "type", "function")

    def __init__(self, id: str, function: FunctionCall, type: str = "function") -> None:
        self.id = id
        self.type = type
        self.function = function

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls[]`` entry of a message."""
        return {"id": self.id, "type": self.type, "function": self.function.to_dict()}

    def __repr__(self) -> str:
        return f"ToolCall(id={self.id!r}, type={self.type!r}, function={self.function!r})"


class ParsedMessage:
    """A complete response: the fold of every delta of one stream."""

    __slots__ = ("content", "reasoning_content", "tool_calls", "reasoning_tokens")

    def __init__(
        self,
        content: str | None = None,
        reasoning_content: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        reasoning_tokens: int | None = None,
    ) -> None:
        self.content = content
        self.reasoning_content = reasoning_content
        self.tool_calls = tool_calls if tool_calls is not None else []
        self.reasoning_tokens = reasoning_tokens

    def to_dict(self, reasoning_field: str = "reasoning_content") -> dict[str, Any]:
        """The OpenAI assistant ``message``: ``content`` always (None when there is none),
        reasoning under ``reasoning_field`` and ``tool_calls`` when present."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content is not None:
            out[reasoning_field] = self.reasoning_content
        if self.tool_calls:
            out["tool_calls"] = [tc.to_dict() for tc in self.tool_calls]
        return out

    def __repr__(self) -> str:
        return (
            f"ParsedMessage(content={self.content!r}, reasoning_content={self.reasoning_content!r}, "
            f"tool_calls={self.tool_calls!r})"
        )
