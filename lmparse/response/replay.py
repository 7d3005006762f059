"""BlockReplay: a tool block's text, kept while the block may still turn back into text.

A block that the tool parser rejects before anything of it is committed was never a
call: its opening goes out as text and everything after the opening is routed again (it
may hold a real block).  A block that the end of the reply cuts off before it commits,
and that the tool parser takes for a call cut off, is syntax: its text is the record
that ``dropped`` keeps.  Until the block commits, the router keeps what the tool parser
consumed of it here; once it commits, or closes, the copy is let go.
"""

from __future__ import annotations

__all__ = ["BlockReplay"]


class BlockReplay:
    __slots__ = ("_parts", "holding", "start", "_opening_in_payload")

    def __init__(self) -> None:
        self._parts: list[str] = []  # the opening, then each consumed piece
        self.holding = False  # whether a block's text is kept (it is open and not committed)
        self.start = 0  # absolute position of the opening in the raw text
        self._opening_in_payload = False

    def begin(self, opening: str, start: int, opening_in_payload: bool) -> None:
        """A block opens with ``opening`` at ``start``; ``opening_in_payload``: the tool
        parser reads the opening too (a payload open tag), so it is not replayed twice."""
        self._parts = [opening]
        self.holding = True
        self.start = start
        self._opening_in_payload = opening_in_payload

    def advance(self, committed: bool, consumed: str) -> None:
        """The tool parser consumed ``consumed``: kept while the block is uncommitted, and
        the copy let go once it commits."""
        if committed:
            self.clear()
        else:
            self._parts.append(consumed)

    def clear(self) -> None:
        self._parts = []
        self.holding = False

    def take(self, rest: str) -> str:
        """The block was cut off by the end of the reply; ``rest`` is the last text the tool
        parser consumed of it.  Returns the block's whole text, opening included."""
        parts = self._parts[1:] if self._opening_in_payload else self._parts
        self.clear()
        return "".join(parts) + rest

    def replay(self, rest: str) -> tuple[str, str, int]:
        """The block was rejected; ``rest`` is what the tool parser had not consumed.
        Returns the opening (to emit as text), the text to route again, and that text's
        absolute position."""
        opening = self._parts[0]
        again = "".join(self._parts[1:]) + rest
        if self._opening_in_payload:
            again = again[len(opening) :]  # the tool parser read the tag too
        self.clear()
        return opening, again, self.start + len(opening)
