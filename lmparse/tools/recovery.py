"""Block-level recovery: a malformed call inside a block is skipped to its delimiter and recorded.

Shared by the drivers whose blocks hold several delimited calls (the XML driver, MiniMax-M3's
elements, the pythonic list): a call that is not the dialect's syntax (an empty name, text where
a parameter belongs) is skipped to the tag or separator that ends it, and its markup becomes a
``dropped`` record (``MALFORMED_CALL``); the calls around it still parse.  A block's malformed
calls before its first good call are held (``SkippedCalls``) and recorded once the block
commits; a block of malformed calls only is text, as prose that mentions a tag is.
"""

from __future__ import annotations

from typing import Final, TYPE_CHECKING

from .calls import Events

if TYPE_CHECKING:
    from .base import ToolParser

__all__ = ["MALFORMED_CALL", "SKIP_LIMIT", "SkippedCalls", "find_call_end"]

MALFORMED_CALL: Final = "malformed call: skipped to its close tag"
# A malformed call is skipped to its delimiter when that arrives within this many characters;
# further on, the block ends where the call began, as before recovery.
SKIP_LIMIT: Final = 4096


def find_call_end(text: str, scan: int, limit: int, close: str, block_close: str | None) -> tuple[int, bool] | None:
    """Where a malformed call ends, searched from ``scan`` up to ``limit``: ``(index after the
    call's close tag, True)`` or ``(index of the block's close tag, False)``, whichever comes
    first; None when neither has arrived within ``limit``."""
    found = text.find(close, scan, limit + len(close))
    ends = text.find(block_close, scan, limit + len(block_close)) if block_close else -1
    if found == -1 and ends == -1:
        return None
    if ends == -1 or (found != -1 and found < ends):
        return found + len(close), True
    return ends, False


class SkippedCalls:
    """The malformed calls of the current block: recorded at once in a block that committed,
    else held until its first good call commits it (``commit``); dropped with a block that
    turns back into text (``reset``)."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: list[str] = []

    def reset(self) -> None:
        self._held = []

    def skip(self, parser: ToolParser, events: Events, markup: str) -> None:
        if parser.committed:
            parser._cut(events, markup, MALFORMED_CALL)
        else:
            self._held.append(markup)

    def commit(self, parser: ToolParser, events: Events) -> None:
        """The block holds a call: the malformed ones before it were its syntax."""
        for markup in self._held:
            parser._cut(events, markup, MALFORMED_CALL)
        self._held = []
