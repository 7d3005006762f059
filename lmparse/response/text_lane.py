"""TextLane: the router's fast path for content and reasoning text, and the one way text is emitted.

Most chunks of a reply are plain text of the channel the router is in.  While the router
stands in PLAIN, or in REASONING past a reasoning open tag's label, the lane is open: a chunk
(with what was held before it) that holds no marker's first character is text as it stands,
found by one ``str.find``, and goes out as one delta without the routing loop.  The router
tells the lane when it moves to another state (``follow``): the channel and the markers that
end its text are the lane's own state.
"""

from __future__ import annotations

from ..markers import MarkerSet
from ..messages import DeltaMessage
from ..tools.base import Deltas
from .label import OpenTagLabel
from .routing import State

__all__ = ["TextLane", "append_text"]

_PLAIN, _REASONING = State.PLAIN, State.REASONING


class TextLane:
    __slots__ = ("_markers", "_content", "_plain", "_reasoning", "_label")

    def __init__(self, plain: MarkerSet, reasoning: MarkerSet, label: OpenTagLabel) -> None:
        self._plain = plain  # what ends content text
        self._reasoning = reasoning  # what ends reasoning text
        self._label = label  # reasoning text starts only after the open tag's label
        self._markers: MarkerSet | None = None  # what ends the text of the current channel; None: closed
        self._content = True  # the channel: content or reasoning

    def follow(self, state: State) -> None:
        """The router now stands in ``state``."""
        if state is _PLAIN:
            self._markers, self._content = self._plain, True
        elif state is _REASONING:
            self._markers, self._content = self._reasoning, False
        else:
            self._markers = None

    def take(self, text: str, deltas: Deltas) -> int:
        """How much of ``text`` (the held suffix and the new chunk) is text of the channel,
        emitted; when it ends with what may begin a marker (a line's ``\\n`` before
        ``\\n<tool_call>``), that much is held, as the router would.  -1, having emitted
        nothing: the router must route it."""
        markers = self._markers
        if markers is None or (not self._content and self._label.pending):
            return -1
        n = end = len(text)
        if not markers.plain_run(text):
            end = markers.held_start(text)
            # (what is held may itself be a whole marker that a longer one begins with: route it)
            if end == n or (end and not markers.plain_run(text[:end])) or markers.search(text, 0) is not None:
                return -1
        if end:
            piece = text if end == n else text[:end]
            deltas.append((DeltaMessage(piece) if self._content else DeltaMessage(None, piece), False))
        return end


def append_text(deltas: Deltas, content: bool, text: str) -> None:
    """Content (or reasoning) text, joined to the chunk's last delta when that is of its channel."""
    if deltas:
        last = deltas[-1][0]
        if content:
            if last.content is not None and last.tool_calls is None:
                last.content += text
                return
        elif last.reasoning_content is not None and last.tool_calls is None:
            last.reasoning_content += text
            return
    if content:
        deltas.append((DeltaMessage(text), False))
    else:
        deltas.append((DeltaMessage(None, text), False))
