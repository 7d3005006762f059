"""BaseResponseParser: routes decoded text between content, reasoning and tool blocks.

The router is a state table (``_TEXT_HANDLERS``, one handler per text state)::

    PLAIN_START      --(whitespace, then not a bare-start character)--> PLAIN
    PLAIN_START      --(whitespace, then a bare-start character)-----> TOOL
    REASONING_START  --(text that is not whitespace)-----------------> REASONING
    REASONING_START  --(the reasoning open tag: dropped)-------------> REASONING
    PLAIN            --(reasoning open tag)---------------------------> REASONING
    REASONING[_START] --(reasoning close tag)-------------------------> PLAIN
    PLAIN | REASONING[_START] --(tool open tag)------------------------> TOOL
    (a reasoning parser may say that a call ends reasoning: the block then returns to PLAIN,
    where a late reasoning close tag is dropped)
    TOOL             --(block closed)---------------------------------> AFTER_BLOCK
    TOOL             --(block rejected: its text is routed again)-----> where it came from
    TOOL             --(block truncated: the reply ended; markup dropped)--> AFTER_BLOCK
    AFTER_BLOCK      --(whitespace; the template's separator dropped if a block follows)--> where it came from

Whitespace is text except the layout the tool dialect's template writes around blocks:
``block_lead`` before an open tag (its variants are markers of their own, ``_Routing.tag_of``)
and ``block_separator`` between blocks (``_layout_start``).

A reply starts in PLAIN_START (when the tool parser allows a bare start) or PLAIN, or
in REASONING_START when the reasoning parser says replies open in reasoning.  The
parser owns one buffer, ``_pending``: the suffix whose meaning is not yet stable (a
possible partial tag, or what the tool parser has not consumed).  Three collaborators keep
their own state: ``BlockReplay`` (a block's text while it may still turn back into text),
``ReasoningTokenCounter`` and ``OpenTagLabel`` (a label after the reasoning open tag).
``parse_complete`` is ``stream_chunk(final=True)`` folded: there is no second grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from ..markers import MarkerSet, skip_ws
from ..messages import DeltaMessage, ParsedMessage
from ..reasoning import ReasoningParser
from ..request import ParserRequest
from ..tools.base import OPEN, REJECTED, TRUNCATED, BlockStep, Deltas, DroppedCall, ToolParser, build_tool_calls
from .label import OpenTagLabel
from .replay import BlockReplay
from .tokens import ReasoningTokenCounter

__all__ = ["ResponseParser", "BaseResponseParser", "fold_deltas"]

# Router states.
_PLAIN_START, _PLAIN, _REASONING_START, _REASONING, _TOOL, _AFTER_BLOCK = range(6)
# A whole special token as chat templates spell them: ``<|name|>``, or DeepSeek's ``<｜name｜``.
_SPECIAL_PIECE = re.compile(r"<\|[^|<>\s]{1,48}\|>|<｜[^｜<>\s]{1,48}｜")
def _cut_off(tail: str, tool_parser: ToolParser | None, open_tags: Iterable[str]) -> int:
    """Where the markup begins in ``tail``, a partial marker the reply ended with (then recorded
    in ``dropped``); ``len(tail)``: it is all text.  A cut-off ``<tool_`` may be prose, but the
    beginning of a tool open tag that already holds a whole special-token-shaped piece
    (``<｜DSML｜function_ca``, ``<|action_start|><|plu``) is not.  The markup is the shortest
    such end of ``tail``: what precedes it was held only because a longer tag could begin there
    (the space of Kimi-K3's spaced `` <|open|> tools <|sep|>`` before a cut ``<|open|>``), so it
    is text, released as any held text is at the end."""
    if tool_parser is None:
        return len(tail)
    last_piece = max((m.start() for m in _SPECIAL_PIECE.finditer(tail)), default=-1)
    for at in range(last_piece, -1, -1):  # once per reply, over at most one marker
        if any(t.startswith(tail[at:]) for t in open_tags):
            tool_parser.record_cut(tail[at:])
            return at
    return len(tail)


_STATE_NAMES = ("plain_start", "plain", "reasoning_start", "reasoning", "tool", "after_block")


def fold_deltas(deltas: Deltas, reasoning_tokens: int | None = None) -> ParsedMessage:
    """The complete message of a stream: text channels joined, tool calls built by index."""
    content: list[str] = []
    reasoning: list[str] = []
    for delta, _ in deltas:
        if delta.content is not None:
            content.append(delta.content)
        if delta.reasoning_content is not None:
            reasoning.append(delta.reasoning_content)
    return ParsedMessage(
        content="".join(content) if content else None,
        reasoning_content="".join(reasoning) if reasoning else None,
        tool_calls=build_tool_calls(deltas),
        reasoning_tokens=reasoning_tokens,
    )


class _Routing(NamedTuple):
    """What the router looks for, from the tool and reasoning parsers it drives."""

    # Payload open tags start a block and belong to its payload (Qwen3-Coder's bare
    # ``<function=``): the tool parser reads them, and they are text if it rejects them.
    payload_tags: frozenset[str]
    open: MarkerSet  # the tool open tags
    # Shared between parsers (cached by content); at the start of a reply that begins in
    # reasoning, an explicit open tag is dropped: ``leading`` looks for it.
    plain: MarkerSet
    reasoning: MarkerSet
    leading: MarkerSet
    start_tag: str | None
    end_tag: str | None
    call_ends_reasoning: bool  # a call ends reasoning (Gemma 4): its close tag may come later, stray
    # The family's message framing (Kimi-K3's response element): dropped from the content,
    # and it ends reasoning.
    framing: frozenset[str]
    # An open tag with the whitespace the template writes before it (``block_lead``, or
    # its end) -> the tag: that whitespace is the block's.  Bare tags map to themselves.
    tag_of: dict[str, str]
    separator: str | None  # what the template writes between two blocks (``block_separator``)

    @classmethod
    def of(cls, tool: ToolParser | None, reasoning_parser: ReasoningParser | None) -> _Routing:
        payload_tags = tool.payload_open_tags if tool is not None else ()
        block_tags = tool.tool_open_tags if tool is not None else ()
        lead = tool.block_lead if tool is not None else ""
        tag_of = {lead[i:] + tag: tag for tag in block_tags for i in range(len(lead) + 1)}
        tag_of.update((tag, tag) for tag in payload_tags)
        open_tags = (*block_tags, *payload_tags)
        start = end = None
        ends = stray_end = False
        framing = tool.framing_markers if tool is not None else ()
        if reasoning := reasoning_parser:
            start, end, ends = reasoning.start_tag, reasoning.end_tag, reasoning.tool_call_ends_reasoning
            stray_end = ends or reasoning.bare_end_tag_dropped  # a close tag in content is dropped
            framing = (*framing, *reasoning.framing_markers)
        stray = (end,) if stray_end else ()
        return cls(frozenset(payload_tags), MarkerSet.of(open_tags),
                   MarkerSet.of((start, *stray, *framing, *tag_of)), MarkerSet.of((end, *framing, *tag_of)),
                   MarkerSet.of((start, end, *framing, *tag_of)), start, end, ends, frozenset(framing), tag_of,
                   tool.block_separator if tool is not None else "")


class ResponseParser:
    """What every response parser offers; one instance per response.

    ``markers`` are the grammar's own markers beyond its tool and reasoning parsers' (a
    tokenizer keeps them whole).

    Every one is built the same way, as ``create_parser`` does: the normalized request,
    then the tool and reasoning parsers built from their registry names (None when not
    named) and the caller's tokenizer, by keyword.  A parser that fixes its own grammar
    (Harmony) ignores what it does not use."""

    markers: tuple[str, ...] = ()
    # The grammar frames the whole reply itself (Harmony's channels), with no tool or reasoning
    # parser: whoever renders replies for it renders them in that framing.
    frames_reply: bool = False
    # A marker and its one token id in the vocabulary this grammar reads token ids in (None: it
    # reads text only): a model whose tokenizer spells the marker otherwise is parsed as text.
    vocabulary_probe: tuple[str, int] | None = None
    # One line on the wire syntax and on what streams, for ``lmparse parsers``.
    summary: str = ""
    streaming: str = ""

    def __init__(
        self,
        request: ParserRequest,
        *,
        tool_parser: ToolParser | None = None,
        reasoning_parser: ReasoningParser | None = None,
        tokenizer: object = None,
    ) -> None:
        self.request = request

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        raise NotImplementedError

    def parse_complete(self, text: str, token_ids: list[int] | None = None) -> ParsedMessage:
        return fold_deltas(self.stream_chunk(text, token_ids, final=True), self.reasoning_tokens)

    @property
    def reasoning_tokens(self) -> int | None:
        return None

    @property
    def dropped(self) -> list[DroppedCall]:
        return []

    @property
    def held_chars(self) -> int:
        """Characters received but not yet emitted or consumed (a possible partial marker)."""
        return 0


class BaseResponseParser(ResponseParser):
    def __init__(
        self,
        request: ParserRequest,
        *,
        tool_parser: ToolParser | None = None,
        reasoning_parser: ReasoningParser | None = None,
        tokenizer: object = None,  # token ids come with the chunks; nothing to look up
    ) -> None:
        super().__init__(request)
        self.tool_parser = tool = tool_parser if tool_parser is not None and request.tools_enabled else None
        r = _Routing.of(tool, reasoning_parser)
        self._open_tags, self._payload_tags, self._open_markers = r.tag_of, r.payload_tags, r.open  # tag_of: leads too
        self._plain_markers, self._reasoning_markers, self._leading_markers = r.plain, r.reasoning, r.leading
        self._end_tag, self._framing, self._separator = r.end_tag, r.framing, r.separator
        self._label = OpenTagLabel(reasoning_parser.start_label if reasoning_parser else "", r.start_tag)
        in_reasoning = reasoning_parser is not None and reasoning_parser.initial_reasoning()
        bare = tool is not None and tool.bare_start
        self._state = _REASONING_START if in_reasoning else _PLAIN_START if bare else _PLAIN
        self._resume = _PLAIN  # the text state a block returns to
        self._pending, self._call_ends_reasoning = "", r.call_ends_reasoning
        self._base = 0  # absolute position of the buffer's first character
        self._replay = BlockReplay()
        self._tokens = ReasoningTokenCounter(in_reasoning)
        self._counting = False  # token ids have arrived: settle the counter after each chunk

    # ---- public surface -------------------------------------------------------------

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        deltas: Deltas = []
        if token_ids:
            self._tokens.note(self._base + len(self._pending), len(text), token_ids)
            self._counting = True
        pending = self._pending
        buf = pending + text if pending else text
        if self._state == _TOOL:
            # Inside a block, the usual step (the block still open) is taken here, without the routing loop.
            step = self.tool_parser.feed_tool_block(buf, deltas, final)  # type: ignore[union-attr]
            if step[1] == OPEN:
                consumed = step[0]
                if consumed and self._replay.holding:
                    self._replay.advance(step[2], buf[:consumed])
                if consumed < len(buf):
                    self._pending = buf[consumed:]
                elif pending:
                    self._pending = ""
                self._base += consumed
            else:
                buf, pos, _ = self._take_step(buf, 0, buf, step, deltas)
                self._route(buf, pos, deltas, final)
        elif final or not _text_run(self, buf, deltas):
            self._route(buf, 0, deltas, final)
        if self._counting:
            self._settle_tokens(final)
        return deltas

    @property
    def reasoning_tokens(self) -> int | None:
        return self._tokens.count if self._tokens.seen else None

    @property
    def held_chars(self) -> int:
        return len(self._pending)

    @property
    def state(self) -> str:
        """Where the router stands: plain_start, plain, reasoning_start, reasoning, tool or after_block."""
        return _STATE_NAMES[self._state]

    @property
    def dropped(self) -> list[DroppedCall]:
        return self.tool_parser.dropped if self.tool_parser is not None else []

    # ---- routing ----------------------------------------------------------------------

    def _route(self, buf: str, pos: int, deltas: Deltas, final: bool) -> None:
        state = self._state
        while True:
            if state == _TOOL:
                buf, pos, go = self._in_tool(buf, pos, deltas, final)
            else:
                pos, go = _TEXT_HANDLERS[state](self, buf, pos, deltas, final)
            if not go:
                break
            state = self._state
        self._pending = buf[pos:]
        self._base += pos

    def _in_tool(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[str, int, bool]:
        """Hand the block's text to the tool parser; a rejected block's text is routed again."""
        rest = buf[pos:] if pos else buf
        step = self.tool_parser.feed_tool_block(rest, deltas, final)  # type: ignore[union-attr]
        return self._take_step(buf, pos, rest, step, deltas)

    def _take_step(self, buf: str, pos: int, rest: str, step: BlockStep, deltas: Deltas) -> tuple[str, int, bool]:
        """What the tool parser did with ``rest`` (``buf`` from ``pos``) moves the router."""
        consumed, status, committed = step
        replay = self._replay
        if status == REJECTED:
            # Never became a call: the opening goes out as text, and what followed it is
            # routed again (it may hold a real block).
            opening, again, self._base = replay.replay(rest)
            self._state = self._resume
            if opening:
                append_text(deltas, self._resume == _PLAIN, opening)
            return again, 0, True
        if status == TRUNCATED:  # the reply ended before its call was named: the markup goes to ``dropped``
            self.tool_parser.record_cut(replay.take(rest[:consumed]))  # type: ignore[union-attr]
        elif consumed and replay.holding:
            replay.advance(committed, rest[:consumed])
        pos += consumed
        if status == OPEN:
            return buf, pos, False
        replay.clear()
        self._state = _AFTER_BLOCK
        return buf, pos, True

    def _text_end(self, buf: str, pos: int, markers: MarkerSet, final: bool) -> int:
        """Where the text of ``buf[pos:]`` (which holds no whole marker) ends: before a
        possible partial marker, or at the end of the reply (see ``_cut_off``)."""
        held = markers.held_start(buf, pos)
        if not final or held == len(buf):
            return held
        return held + _cut_off(buf[held:], self.tool_parser, self._open_tags)

    def _after_block(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[int, bool]:
        """Before another block the template's ``block_separator`` (or its end) is dropped; other whitespace is text."""
        ws_end = skip_ws(buf, pos)
        if not final and (ws_end == len(buf) or self._open_markers.is_proper_prefix(buf, ws_end)):
            return pos, False
        if self._open_markers.startswith_at(buf, ws_end):
            if (cut := _layout_start(buf, pos, ws_end, self._separator)) > pos:
                append_text(deltas, self._resume == _PLAIN, buf[pos:cut])
            pos = ws_end
        self._state = self._resume
        return pos, True

    def _plain_start(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[int, bool]:
        """The reply's first characters may open a block with no open tag (a bare start)."""
        ws_end = skip_ws(buf, pos)
        if ws_end == len(buf) and not final:
            return pos, False
        self._state = _PLAIN
        if ws_end < len(buf) and buf[ws_end] in self.tool_parser.bare_start_chars:  # type: ignore[union-attr]
            self._enter_tool(buf[pos:ws_end], self._base + pos, "")
            return ws_end, True
        return pos, True

    def _text_tail(self, buf: str, pos: int, markers: MarkerSet, deltas: Deltas, final: bool,
                   content: bool) -> tuple[int, bool]:
        """No whole marker from ``pos``: all but a possible partial marker is text."""
        end = self._text_end(buf, pos, markers, final)
        if end > pos:
            append_text(deltas, content, buf[pos:end])
        return (len(buf) if final else end), False

    def _plain(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[int, bool]:
        match = self._plain_markers.search(buf, pos)
        if match is None:
            return self._text_tail(buf, pos, self._plain_markers, deltas, final, True)
        start, end = match.span()
        if start > pos:
            append_text(deltas, True, buf[pos:start])
        tag = match.group()
        if tag in self._open_tags:
            return self._open_block(tag, start, end), True
        if tag == self._end_tag or tag in self._framing:
            return end, True  # framing, or a stray close tag after a call ended the reasoning
        self._state = _REASONING  # the reasoning open tag
        self._label.opened()
        self._tokens.open(self._base + end)
        return end, True

    def _reasoning(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[int, bool]:
        if self._label.pending:
            found = self._label.skip(buf, pos, final)
            if found is None:
                return pos, False
            pos = found
        match = self._reasoning_markers.search(buf, pos)
        if match is None:
            return self._text_tail(buf, pos, self._reasoning_markers, deltas, final, False)
        start, end = match.span()
        if start > pos:
            append_text(deltas, False, buf[pos:start])
        tag = match.group()
        if tag in self._open_tags:
            return self._open_block(tag, start, end), True
        self._close_reasoning(start)
        return end, True

    def _reasoning_start(self, buf: str, pos: int, deltas: Deltas, final: bool) -> tuple[int, bool]:
        """Reasoning at the reply's start: an open tag before any other text is dropped."""
        match = self._leading_markers.search(buf, pos)
        if match is None:
            step = self._text_tail(buf, pos, self._leading_markers, deltas, final, False)
            if step[0] > pos and not buf[pos:step[0]].isspace():
                self._state = _REASONING  # text came: a later open tag is text too
            return step
        start, end = match.span()
        before = buf[pos:start]
        if before:
            append_text(deltas, False, before)
        tag = match.group()
        self._state = _REASONING
        if tag in self._open_tags:
            return self._open_block(tag, start, end), True
        if tag == self._end_tag or tag in self._framing:
            self._close_reasoning(start)
        elif before and not before.isspace():
            append_text(deltas, False, tag)  # text came first: not a leading tag, just text
        else:
            self._label.opened()
            self._tokens.open(self._base + end)  # a leading open tag: dropped
        return end, True

    # ---- transitions ------------------------------------------------------------------

    def _open_block(self, marker: str, start: int, end: int) -> int:
        """An open tag (maybe after its lead) at ``start``; returns where the tool parser's text begins."""
        tag = self._open_tags[marker]
        if tag in self._payload_tags:
            self._enter_tool(tag, self._base + start, "", opening_in_payload=True)
            return start  # the tag is the payload's first syntax
        self._enter_tool(marker, self._base + start, tag)  # a rejected block replays its lead too
        return end

    def _enter_tool(self, opening: str, abs_start: int, open_tag: str, opening_in_payload: bool = False) -> None:
        if self._state != _PLAIN and self._call_ends_reasoning:
            self._tokens.close(abs_start)
            self._state = _PLAIN
        self._resume = _PLAIN if self._state == _PLAIN else _REASONING
        self._state = _TOOL
        self._replay.begin(opening, abs_start, opening_in_payload)
        self.tool_parser.start_block(open_tag)  # type: ignore[union-attr]

    def _close_reasoning(self, at: int) -> None:
        self._tokens.close(self._base + at)
        self._state = _PLAIN

    def _settle_tokens(self, final: bool) -> None:
        """Tokens are settled before the held suffix, or before a block that may still
        turn back into text (and move a tag)."""
        if final:
            settled = self._base + len(self._pending) + 1
        elif self._state == _TOOL and self._replay.holding:
            settled = self._replay.start
        else:
            settled = self._base
        self._tokens.settle(settled)


def _text_run(parser: BaseResponseParser, text: str, deltas: Deltas) -> bool:
    """The text lane: in content or reasoning, a chunk (with what was held before it) that
    holds no marker's first character is text as it stands, found by one ``str.find``; when
    it ends with what may begin a marker (a line's ``\n`` before ``\n<tool_call>``), that
    much is held, as ``_text_tail`` would.  False, having changed nothing: route it."""
    state = parser._state
    if state == _PLAIN:
        markers = parser._plain_markers
    elif state == _REASONING and not parser._label.pending:
        markers = parser._reasoning_markers
    else:
        return False
    n = end = len(text)
    if not markers.plain_run(text):
        end = markers.held_start(text)
        # (what is held may itself be a whole marker that a longer one begins with: route it)
        if end == n or (end and not markers.plain_run(text[:end])) or markers.search(text, 0) is not None:
            return False
    if end:
        piece = text if end == n else text[:end]
        deltas.append((DeltaMessage(piece) if state == _PLAIN else DeltaMessage(None, piece), False))
    parser._pending = "" if end == n else text[end:]
    parser._base += end
    return True


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


def _layout_start(text: str, start: int, end: int, layout: str | None) -> int:
    """Where the template's ``layout`` begins in the whitespace ``text[start:end]`` before
    a block: the longest end of it that ``layout`` ends with too (None: all of it)."""
    if layout is None:
        return start
    n = min(end - start, len(layout))
    while n and not layout.endswith(text[end - n : end]):
        n -= 1
    return end - n


_TextHandler = Callable[[BaseResponseParser, str, int, Deltas, bool], tuple[int, bool]]
_TEXT_HANDLERS: dict[int, _TextHandler] = {
    _PLAIN_START: BaseResponseParser._plain_start,
    _PLAIN: BaseResponseParser._plain,
    _REASONING_START: BaseResponseParser._reasoning_start,
    _REASONING: BaseResponseParser._reasoning,
    _AFTER_BLOCK: BaseResponseParser._after_block,
}
# What ``lmparse parsers`` says of the router (declared outside: the class is at its size limit).
BaseResponseParser.summary = "text routed by the reasoning parser's tags and the tool dialect's open tags"
BaseResponseParser.streaming = "content and reasoning as they arrive (a split marker held until it resolves)"
