"""Lexers: what comes next in each of the router's text states, recognized and reported as a ``Mark``.

A lexer reads the buffered text from where the router stands, appends the text before what
it finds as a ``Text`` event of its state's channel, and returns ``(mark, start, end)``: the
mark, and where it lies (for END, where the router stops: before a possible partial marker,
or at the end of the reply).  It decides nothing: ``routing.ROUTING`` says what each mark does.  Reasoning text
begins after the open tag's label (``OpenTagLabel``), which the reasoning lexer skips.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from ..markers import MarkerSet, skip_ws
from ..reasoning import ReasoningParser
from ..events import CONTENT, REASONING, Channel, Events, Text
from ..tools.base import ToolParser
from .label import OpenTagLabel
from .routing import Mark

__all__ = ["Lexers", "RouterMarkers"]

_END: Final = Mark.END
_TEXT_END: Final = Mark.TEXT_END
_TEXT: Final = Mark.TEXT
_BARE_START: Final = Mark.BARE_START


class RouterMarkers(NamedTuple):
    """What the lexers look for, from the tool and reasoning parsers the router drives."""

    kind_of: dict[str, Mark]  # every marker below -> what it is
    open: MarkerSet  # the tool and payload open tags, bare (after a block)
    # Shared between parsers (cached by content).  At the start of a reply that begins in
    # reasoning, an explicit open tag is dropped: ``leading`` looks for it.
    plain: MarkerSet
    reasoning: MarkerSet
    leading: MarkerSet
    start_tag: str | None
    call_ends_reasoning: bool  # a call ends reasoning (Gemma 4): its close tag may come later, stray
    # An open tag with the whitespace the template writes before it (``block_lead``, or
    # its end) -> the tag: that whitespace is the block's.  Bare tags map to themselves.
    tag_of: dict[str, str]
    separator: str | None  # what the template writes between two blocks (``block_separator``)

    @classmethod
    def of(cls, tool: ToolParser, reasoning_parser: ReasoningParser | None) -> RouterMarkers:
        payload_tags, block_tags, lead = tool.payload_open_tags, tool.tool_open_tags, tool.block_lead
        tag_of = {lead[i:] + tag: tag for tag in block_tags for i in range(len(lead) + 1)}
        tag_of.update((tag, tag) for tag in payload_tags)
        start = end = None
        ends = stray_end = False
        framing = tool.framing_markers
        if reasoning := reasoning_parser:
            start, end, ends = reasoning.start_tag, reasoning.end_tag, reasoning.tool_call_ends_reasoning
            stray_end = ends or reasoning.bare_end_tag_dropped  # a close tag in content is dropped
            framing = (*framing, *reasoning.framing_markers)
        # Where one string is two kinds of marker, an open tag wins, then framing or a close
        # tag (their plans are the same everywhere), then the reasoning open tag.
        kind_of = {m: Mark.REASONING_OPEN for m in (start,) if m}
        kind_of.update((m, Mark.REASONING_CLOSE) for m in (end,) if m)
        kind_of.update((m, Mark.FRAMING) for m in framing if m)
        kind_of.update((m, Mark.PAYLOAD_OPEN if tag in payload_tags else Mark.TOOL_OPEN) for m, tag in tag_of.items())
        stray = (end,) if stray_end else ()
        return cls(kind_of, MarkerSet.of((*block_tags, *payload_tags)),
                   MarkerSet.of((start, *stray, *framing, *tag_of)), MarkerSet.of((end, *framing, *tag_of)),
                   MarkerSet.of((start, end, *framing, *tag_of)), start, ends, tag_of, tool.block_separator)


class Lexers:
    """The lexers of one response's router (methods named by state), sharing its markers and label."""

    __slots__ = ("markers", "label", "_bare_start_chars")

    def __init__(self, markers: RouterMarkers, label: OpenTagLabel, tool_parser: ToolParser) -> None:
        self.markers = markers
        self.label = label
        self._bare_start_chars = tool_parser.bare_start_chars

    def plain_start(self, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
        """The reply's first characters may open a block with no open tag (a bare start)."""
        ws_end = skip_ws(buf, pos)
        if ws_end == len(buf):
            return (_TEXT if final else _END), pos, pos
        if buf[ws_end] in self._bare_start_chars:
            return _BARE_START, pos, ws_end
        return _TEXT, pos, pos

    def plain(self, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
        markers = self.markers.plain
        match = markers.search(buf, pos)
        if match is None:
            end = self._text_tail(buf, pos, markers, events, final, CONTENT)
            return _END, end, end
        start, end = match.span()
        if start > pos:
            events.append(Text(CONTENT, buf[pos:start]))
        if not final and markers.may_extend(buf, start):
            return _END, start, start
        return self.markers.kind_of[match.group()], start, end

    def reasoning_start(self, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
        markers = self.markers.leading
        match = markers.search(buf, pos)
        if match is None:
            end = self._text_tail(buf, pos, markers, events, final, REASONING)
            return (_TEXT_END if end > pos and not buf[pos:end].isspace() else _END), end, end
        start, end = match.span()
        if start > pos:
            events.append(Text(REASONING, buf[pos:start]))
        if not final and markers.may_extend(buf, start):
            return (_TEXT_END if start > pos and not buf[pos:start].isspace() else _END), start, start
        return self.markers.kind_of[match.group()], start, end

    def reasoning(self, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
        if self.label.pending:
            found = self.label.skip(buf, pos, final)
            if found is None:
                return _END, pos, pos
            pos = found
        markers = self.markers.reasoning
        match = markers.search(buf, pos)
        if match is None:
            end = self._text_tail(buf, pos, markers, events, final, REASONING)
            return _END, end, end
        start, end = match.span()
        if start > pos:
            events.append(Text(REASONING, buf[pos:start]))
        if not final and markers.may_extend(buf, start):
            return _END, start, start
        return self.markers.kind_of[match.group()], start, end

    def after_block(self, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
        """Whitespace, then maybe another block's open tag."""
        ws_end = skip_ws(buf, pos)
        opens = self.markers.open
        if not final and (ws_end == len(buf) or opens.is_proper_prefix(buf, ws_end)):
            return _END, pos, pos
        tag = opens.startswith_at(buf, ws_end)
        if tag is not None:
            if ws_end > pos and buf[ws_end - 1] == " " and " " + tag in self.markers.tag_of:
                ws_end -= 1  # the space a spaced open tag starts with (``tools/spaced.py``) is the tag's
            return self.markers.kind_of[tag], pos, ws_end
        return _TEXT, pos, pos

    def _text_tail(self, buf: str, pos: int, markers: MarkerSet, events: Events, final: bool, channel: Channel) -> int:
        """No whole marker from ``pos``: all but a possible partial marker is text; returns where
        the router stops.  At ``final`` the partial marker is text too: it was held only because
        a marker could begin there, and none did (DESIGN §3: ``final`` releases ambiguous text)."""
        held = len(buf) if final else markers.held_start(buf, pos)
        if held > pos:
            events.append(Text(channel, buf[pos:held]))
        return len(buf) if final else held
