"""TextLane: the router's fast path for content and reasoning text.

Most chunks of a reply are plain text of the channel the router is in.  While the router
stands in PLAIN, or in REASONING past a reasoning open tag's label, the lane is open: a chunk
(with what was held before it) that holds no marker's first character is text as it stands,
found by one ``str.find``, and goes out as one delta without the routing loop or an event
(the edge builds that delta from ``take``'s answer and ``channel``).  The router tells the
lane when it moves to another state (``follow``): the channel and the markers that end its
text are the lane's own state.
"""

from __future__ import annotations

from typing import Final

from ..events import CONTENT, REASONING, Channel
from ..markers import MarkerSet
from .label import OpenTagLabel
from .routing import State

__all__ = ["TextLane"]

_PLAIN: Final = State.PLAIN
_REASONING: Final = State.REASONING


class TextLane:
    __slots__ = ("_markers", "channel", "_plain", "_reasoning", "_label")

    def __init__(self, plain: MarkerSet, reasoning: MarkerSet, label: OpenTagLabel) -> None:
        self._plain = plain  # what ends content text
        self._reasoning = reasoning  # what ends reasoning text
        self._label = label  # reasoning text starts only after the open tag's label
        self._markers: MarkerSet | None = None  # what ends the text of the current channel; None: closed
        self.channel: Channel = CONTENT  # the channel of the text ``take`` answers for

    def follow(self, state: State) -> None:
        """The router now stands in ``state``."""
        if state is _PLAIN:
            self._markers, self.channel = self._plain, CONTENT
        elif state is _REASONING:
            self._markers, self.channel = self._reasoning, REASONING
        else:
            self._markers = None

    def take(self, text: str) -> int:
        """How much of ``text`` (the held suffix and the new chunk) is text of ``channel``;
        when it ends with what may begin a marker (a line's ``\\n`` before ``\\n<tool_call>``),
        that much is held, as the router would.  -1: the router must route it."""
        markers = self._markers
        if markers is None or (self.channel is REASONING and self._label.pending):
            return -1
        n = end = len(text)
        if not markers.plain_run(text):
            end = markers.held_start(text)
            # (what is held may itself be a whole marker that a longer one begins with: route it)
            if end == n or (end and not markers.plain_run(text[:end])) or markers.search(text, 0) is not None:
                return -1
        return end
