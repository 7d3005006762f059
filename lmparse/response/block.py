"""ToolBlock: the router's TOOL state and its data -- the block parser, the replay copy, where to return.

One ``ToolBlock`` serves a response's blocks one after another: ``open`` starts one (the
tool parser's ``start_block``), the router feeds ``parser`` the block's text, and the
parser's verdicts are the TOOL row of ``ROUTING``.  A reply that cannot hold calls (no tool
parser, or a request without tools) gets a block whose parser is ``NoTools``: it declares no
open tag and no bare start, so no block ever opens, and the router needs no optional parser.
"""

from __future__ import annotations

from ..tools.base import Events, PayloadStep, ToolParser
from .replay import BlockReplay
from .routing import State

__all__ = ["ToolBlock", "NoTools"]


class NoTools(ToolParser):
    """The block parser of a reply without tools: no markers, so it is never fed."""

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        raise AssertionError("the router opened a block in a reply without tools")


class ToolBlock:
    __slots__ = ("parser", "replay", "resume")

    def __init__(self, parser: ToolParser) -> None:
        self.parser = parser
        self.replay = BlockReplay()  # the block's text while it may still turn back into text
        self.resume = State.PLAIN  # the text state the open (or last) block returns to

    def open(self, opening: str, at: int, open_tag: str, resume: State, opening_in_payload: bool) -> None:
        """A block opens with ``opening`` at absolute position ``at`` (``open_tag``: "" for a bare
        start or a payload open tag); ``opening_in_payload``: the parser reads the opening too."""
        self.resume = resume
        self.replay.begin(opening, at, opening_in_payload)
        self.parser.start_block(open_tag)
