"""ReasoningTokenCounter: how many of a response's tokens are reasoning, counted as it streams.

A token counts as reasoning when its first character lies inside a reasoning interval
of the raw text, tags included in the interval's bounds as the router reports them.
The router reports positions (absolute offsets in the raw text): where each chunk's
tokens start (``note``), where reasoning opens and closes (``open`` / ``close``), and up
to where the meaning of the text is settled (``settle``); a token is classified once,
when its start is settled.
"""

from __future__ import annotations

__all__ = ["ReasoningTokenCounter"]


class ReasoningTokenCounter:
    __slots__ = ("count", "seen", "_open_at", "_intervals", "_starts", "_interval_ptr")

    def __init__(self, in_reasoning: bool) -> None:
        self.count = 0  # reasoning tokens classified so far
        self.seen = False  # whether any chunk carried token ids
        self._open_at: int | None = 0 if in_reasoning else None  # start of the open interval
        self._intervals: list[tuple[int, int]] = []  # closed intervals, in order
        self._starts: list[int] = []  # starts of the tokens not classified yet
        self._interval_ptr = 0

    def note(self, start: int, length: int, token_ids: list[int]) -> None:
        """A chunk of ``length`` characters at ``start`` carried these tokens.

        Engines usually send one token per chunk, which is exact; for several tokens
        in one chunk their starts are spread evenly over the chunk's text."""
        self.seen = True
        k = len(token_ids)
        if k == 1:
            self._starts.append(start)
        else:
            self._starts.extend(start + (i * length) // k for i in range(k))

    def open(self, at: int) -> None:
        """Reasoning starts at ``at`` (a later ``open`` moves the start: a dropped leading tag)."""
        self._open_at = at

    def close(self, at: int) -> None:
        """Reasoning ends at ``at``."""
        if self._open_at is not None:
            self._intervals.append((self._open_at, at))
        self._open_at = None

    def settle(self, upto: int) -> None:
        """Classify every noted token that starts before ``upto``."""
        starts, intervals = self._starts, self._intervals
        i, j = 0, self._interval_ptr
        count = 0
        open_at = self._open_at
        while i < len(starts) and starts[i] < upto:
            p = starts[i]
            while j < len(intervals) and intervals[j][1] <= p:
                j += 1
            if j < len(intervals):
                if intervals[j][0] <= p:
                    count += 1
            elif open_at is not None and open_at <= p:
                count += 1
            i += 1
        self.count += count
        del starts[:i]
        self._interval_ptr = j
