"""Finding markers in streamed text and holding a partial marker at the end of a chunk.

Decoded chunks end at token boundaries, but proxies, speculative decoding or other
tokenizers may split anywhere, so a held suffix is computed for any split, not only
at the token-aligned prefixes a dialect declares.  Every look is bounded by the
longest marker: nothing already passed is searched again.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Final
from collections.abc import Iterable

__all__ = ["MarkerSet", "held_prefix_start", "skip_ws", "WHITESPACE"]

WHITESPACE: Final = " \t\r\n"


def held_prefix_start(text: str, marker: str, start: int = 0) -> int:
    """Index at which a proper prefix of ``marker`` ends ``text`` (``len(text)`` if none)."""
    n = len(text)
    first = marker[0]
    i = text.find(first, max(start, n - len(marker) + 1))
    while i != -1:
        if marker.startswith(text[i:]):
            return i
        i = text.find(first, i + 1)
    return n


class MarkerSet:
    """A fixed set of markers: one C-level search for the next one, bounded partial holding."""

    __slots__ = ("markers", "_pattern", "_by_first", "_max_len", "_anchor", "_max_lead", "_partial_ends", "_after",
                 "_nested", "_first", "_lead_last")

    def __init__(self, markers: Iterable[str]) -> None:
        uniq = sorted({m for m in markers if m}, key=len, reverse=True)
        self.markers = tuple(uniq)
        # Longest first, so a marker that extends another wins the alternation.
        self._pattern = re.compile("|".join(map(re.escape, uniq))) if uniq else None
        by_first: dict[str, list[str]] = {}
        for m in uniq:
            by_first.setdefault(m[0], []).append(m)
        self._by_first = tuple((c, tuple(ms)) for c, ms in by_first.items())
        self._max_len = len(uniq[0]) if uniq else 0
        # Some marker is the start of a longer one (Muse's `` to=`` and `` to=self<|message|>``).
        self._nested = any(a != b and a.startswith(b) for a in uniq for b in uniq)
        # Markers differ in their leading whitespace (a template's layout before a tag), and
        # after it they share a head (``<``, ``</``, ``<｜DSML｜``): searching for that anchor
        # with ``str.find`` and matching only around each hit skips ordinary text in C, where
        # the regex alone would try its alternation at every newline.
        tags = [m.lstrip(WHITESPACE) for m in uniq]
        leads = [m[: len(m) - len(tag)] for m, tag in zip(uniq, tags, strict=True)]
        anchor = os.path.commonprefix(tags) if tags and all(tags) else ""
        self._anchor = anchor or None
        # What may follow the anchor in a marker: a hit followed by anything else is ordinary
        # text, passed over without the regex (``<`` in prose or code, ``<=``, ``<b``).
        self._after = "".join(sorted({tag[len(anchor)] for tag in tags})) if anchor and all(
            len(tag) > len(anchor) for tag in tags) else None
        self._max_lead = max(map(len, leads), default=0)
        # A text ending with one of these may end with part of a marker (``plain_run``).
        self._partial_ends = tuple({*(anchor[:k] for k in range(1, len(anchor))),
                                    *(lead[:k] for lead in leads for k in range(1, len(lead) + 1))})
        # A text without the anchor's first character that does not end with what a marker's
        # leading whitespace ends with ends with no partial marker (``plain_run``'s first look).
        self._first = anchor[:1]
        self._lead_last = "".join({lead[k - 1] for lead in leads for k in range(1, len(lead) + 1)})

    @staticmethod
    def of(markers: Iterable[str | None]) -> MarkerSet:
        """The (immutable, shared) set of these markers; falsy entries are left out."""
        return _marker_set(frozenset(m for m in markers if m))

    def __bool__(self) -> bool:
        return bool(self.markers)

    def search(self, text: str, pos: int) -> re.Match[str] | None:
        """The leftmost marker at or after ``pos`` (the longest of those starting there)."""
        pattern, anchor = self._pattern, self._anchor
        if pattern is None or anchor is None:
            return pattern.search(text, pos) if pattern is not None else None
        # A match's leading whitespace cannot reach back past an earlier anchor (that is not
        # whitespace): the first anchor with a match around it has the leftmost one.  Only a
        # match whose anchor is ``at`` is taken from its window, so none is cut short by it.
        # One character is searched for (memchr; a longer needle costs several times more).
        lead, span, first, after, k = self._max_lead, self._max_len, anchor[0], self._after, len(anchor)
        at = text.find(first, pos)
        while at != -1:
            if text.startswith(anchor, at) and (after is None or text[at + k : at + k + 1] in after):
                match = pattern.search(text, max(pos, at - lead), at + span)
                if match is not None and match.start() <= at:
                    return match
            at = text.find(first, at + 1)
        return None

    def plain_run(self, text: str) -> bool:
        """Whether ``text`` surely holds no marker and ends with no part of one (False: look closer)."""
        anchor = self._anchor
        if anchor is None or not text or anchor in text:
            return False
        lead_last = self._lead_last
        return (self._first not in text and (not lead_last or text[-1] not in lead_last)) or not text.endswith(
            self._partial_ends)

    def held_start(self, text: str, start: int = 0) -> int:
        """Index where a proper prefix of some marker ends ``text``; ``len(text)`` if none."""
        n = len(text)
        best = n
        lo = max(start, n - self._max_len + 1)
        for first, markers in self._by_first:
            i = text.find(first, lo)
            while i != -1 and i < best:
                tail = text[i:]
                if any(m.startswith(tail) for m in markers):
                    best = i
                    break
                i = text.find(first, i + 1)
        return best

    def is_proper_prefix(self, text: str, pos: int = 0) -> bool:
        """Whether ``text[pos:]`` is a proper prefix of some marker (may still become one)."""
        size = len(text) - pos
        return 0 < size < self._max_len and any(m.startswith(text[pos:]) for m in self.markers if len(m) > size)

    def may_extend(self, text: str, start: int) -> bool:
        """Whether the marker found at ``start``, at the end of ``text``, may still be the start
        of a longer one (streamed, the longer one is waited for, as the whole text would match it)."""
        return self._nested and len(text) - start < self._max_len and self.is_proper_prefix(text, start)

    def startswith_at(self, text: str, pos: int) -> str | None:
        """The marker that starts at ``pos``, if any."""
        for m in self.markers:
            if text.startswith(m, pos):
                return m
        return None


@functools.lru_cache(maxsize=512)
def _marker_set(markers: frozenset[str]) -> MarkerSet:
    return MarkerSet(markers)


def skip_ws(text: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not whitespace (``len(text)`` if none)."""
    n = len(text)
    while pos < n and text[pos] in WHITESPACE:
        pos += 1
    return pos
