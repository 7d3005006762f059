"""OpenTagLabel: the label a reasoning open tag may carry, dropped right after the tag.

Gemma 4 opens reasoning with ``<|channel>thought\\n``: ``thought`` + newline names the
channel and is not reasoning.  After each reasoning open tag the router asks ``skip``
where the reasoning text starts: past the label if it is there (and past a repeated
open tag, ``<|channel><|channel>``), at once if something else came, or not yet (None)
while the text so far may still be the label.  What it waits on is at most the label's
length, held by the router like any partial marker.
"""

from __future__ import annotations

__all__ = ["OpenTagLabel"]


class OpenTagLabel:
    __slots__ = ("label", "open_tag", "pending")

    def __init__(self, label: str, open_tag: str | None) -> None:
        self.label = label
        self.open_tag = open_tag or ""
        self.pending = False  # reasoning just opened: the label may come next

    def opened(self) -> None:
        """A reasoning open tag was read."""
        self.pending = bool(self.label)

    def skip(self, text: str, pos: int, final: bool) -> int | None:
        """Where the reasoning text at ``pos`` starts, or None while it may still be the label."""
        open_tag, label = self.open_tag, self.label
        while open_tag and text.startswith(open_tag, pos):
            pos += len(open_tag)
        if text.startswith(label, pos):
            self.pending = False
            return pos + len(label)
        rest = text[pos:]
        if not final and any(len(rest) < len(m) and m.startswith(rest) for m in (label, open_tag) if m):
            return None
        self.pending = False
        return pos
