"""The dialect extension surface: the hooks a driver base calls, as ``Protocol`` classes.

A tool dialect is a subclass of one driver base (``ToolParser``, ``JsonToolParser``,
``XmlToolParser``, ``SectionToolParser``, ``LiteralCallParser``) that declares its markers as
class data and implements these hooks.  A hook reads text from a position and returns what
it decided; it never sets the driver's state (the driver owns the block: whether the payload
closed, whether the block was rejected or committed, the fast lane).  The router-facing
interface (``feed_tool_block``, ``start_block``, ``record_cut``, ``dropped``) is the driver's.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .base import Events, Payload, PayloadStep
from .xml import ArgNameStep, ArgStartStep, Found, FunctionStep

__all__ = ["DialectHooks", "XmlDialectHooks", "SectionDialectHooks"]


@runtime_checkable
class DialectHooks(Protocol):
    """What ``ToolParser.feed_tool_block`` calls on every dialect."""

    def _reset_payload(self) -> None:
        """Reset the dialect's per-block state (a block starts)."""

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        """Read the payload from the start of ``text``: ``(position, MORE | RUN | PAYLOAD_CLOSED |
        PAYLOAD_REJECTED)``; never consumes the outer close tag."""
        ...

    def _finish_payload(self, events: Events) -> Payload:
        """The input ended inside the payload: close what was emitted, invent nothing."""
        ...

    def _cut_is_syntax(self) -> bool:
        """The input ended inside a block that committed nothing: whether it is a call cut off."""
        ...

    def _consume_close(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, bool]:
        """After the payload: ``(position, whether the block closed)``."""
        ...


@runtime_checkable
class XmlDialectHooks(Protocol):
    """The three pure hooks of an ``XmlToolParser`` dialect: a step, None (wait) or MALFORMED."""

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        """A function opens (its name, then arguments or its end), or no function follows."""
        ...

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        """A parameter opens, or the function ends."""
        ...

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        """A parameter's key: the value starts at the position returned."""
        ...


@runtime_checkable
class SectionDialectHooks(Protocol):
    """What a ``SectionToolParser`` dialect may override besides its markers."""

    @classmethod
    def _split_header(cls, header: str) -> tuple[str | None, str | None]:
        """``(function name or None, the model's call id or None)`` of a complete header."""
        ...
