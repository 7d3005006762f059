"""BaseResponseParser: routes decoded text between content, reasoning and tool blocks.

The router is the table ``routing.ROUTING``: in each state, a lexer (``lexers.py``) reports
what comes next as a mark; the mark's plan is a step (``_<step>``, run once) and the next
state (RESUME: the text state the block came from; wait: stay, and wait for more text)::

    PLAIN_START      bare start: open_bare -> TOOL
                     text: -> PLAIN
                     end: wait
    PLAIN            reasoning open: open_reasoning -> REASONING
                     reasoning close, framing: drop -> PLAIN
                     tool open: open_block -> TOOL
                     payload open: open_payload -> TOOL
                     end: wait
    REASONING_START  reasoning open: leading_open -> REASONING
                     reasoning close, framing: close_reasoning -> PLAIN
                     tool open: open_block -> TOOL
                     payload open: open_payload -> TOOL
                     end: wait
                     text end: -> REASONING
    REASONING        reasoning close, framing: close_reasoning -> PLAIN
                     tool open: open_block -> TOOL
                     payload open: open_payload -> TOOL
                     end: wait
    TOOL             open: wait
                     closed: end_block -> AFTER_BLOCK
                     rejected: replay_opening -> RESUME
                     truncated: record_cut -> AFTER_BLOCK
    AFTER_BLOCK      tool open, payload open: drop_separator -> RESUME
                     text: -> RESUME
                     end: wait

A mark missing from a state's row is one its lexer cannot report (``routing.NEVER``; the
table is checked whole at import).  "end" is the buffered text holding no whole marker (it
went out as text, a possible partial marker held); "text end" is that, not only whitespace,
at the reply's start.  In TOOL the marks are the block parser's verdicts.

A stray close tag in content is looked for only when the reasoning parser drops it; a leading
reasoning open tag is dropped unless text came before it; a reasoning parser may say that a
call ends reasoning (Gemma 4): the block then returns to PLAIN.  Whitespace is text except the
layout the tool dialect's template writes around blocks: ``block_lead`` before an open tag (its
variants are markers of their own, ``RouterMarkers.tag_of``) and ``block_separator`` between
blocks (``_layout_start``).

The parser owns one buffer, ``_pending``: the suffix whose meaning is not yet stable (a
possible partial tag, or what the tool parser has not consumed).  Collaborators keep their own
state: ``TextLane`` (the fast path for content and reasoning text), ``ToolBlock`` (the TOOL
state's block parser, its ``BlockReplay`` and where it returns), ``ReasoningTokenCounter`` and
``OpenTagLabel`` (a label after the reasoning open tag).  ``parse_complete`` is
``stream_chunk(final=True)`` folded: there is no second grammar.

What every step, lexer and block parser decided about the reply's characters is appended to
the chunk's content events (``lmparse.events``); ``stream_chunk`` is the edge that makes them
OpenAI deltas (``deltas_of``), except a text-lane chunk, which is one delta built directly.
"""

from __future__ import annotations

from typing import ClassVar, Final

from collections.abc import Callable

from ..events import CONTENT, REASONING, Events, Text
from ..messages import DeltaMessage, Deltas, ParsedMessage, arguments_delta, deltas_of
from ..reasoning import ReasoningParser
from ..request import ParserRequest
from ..tools.base import OPEN, REJECTED, TRUNCATED, BlockStep, DroppedCall, ToolParser, build_tool_calls
from .block import NoTools, ToolBlock
from .label import OpenTagLabel
from .lexers import Lexers, RouterMarkers
from .routing import NEVER, RESUME, RETURNS_TO, ROUTING, STOPS, Mark, State
from .text_lane import TextLane
from .tokens import ReasoningTokenCounter
from .._mypyc import mypyc_attr

__all__ = ["ResponseParser", "BaseResponseParser", "fold_deltas"]

# Module-level names for the members: an enum class's attribute lookup is slow on hot paths.
_PLAIN_START: Final = State.PLAIN_START
_PLAIN: Final = State.PLAIN
_REASONING_START: Final = State.REASONING_START
_REASONING: Final = State.REASONING
_TOOL: Final = State.TOOL
_AFTER_BLOCK: Final = State.AFTER_BLOCK
_END: Final = Mark.END
_BLOCK_OPEN: Final = Mark.BLOCK_OPEN
_BLOCK_CLOSED: Final = Mark.BLOCK_CLOSED


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


@mypyc_attr(allow_interpreted_subclasses=True)
class ResponseParser:
    """What every response parser offers; one instance per response.

    ``markers`` are the grammar's own markers beyond its tool and reasoning parsers' (a
    tokenizer keeps them whole).

    Every one is built the same way, as ``create_parser`` does: the normalized request,
    then the tool and reasoning parsers built from their registry names (None when not
    named) and the caller's tokenizer, by keyword.  A parser that fixes its own grammar
    (Harmony) ignores what it does not use."""

    markers: ClassVar[tuple[str, ...]] = ()
    # The grammar frames the whole reply itself (Harmony's channels), with no tool or reasoning
    # parser: whoever renders replies for it renders them in that framing.
    frames_reply: ClassVar[bool] = False
    # A marker and its one token id in the vocabulary this grammar reads token ids in (None: it
    # reads text only): a model whose tokenizer spells the marker otherwise is parsed as text.
    vocabulary_probe: ClassVar[tuple[str, int] | None] = None
    # One line on the wire syntax and on what streams, for ``lmparse parsers``.
    summary: ClassVar[str] = ""
    streaming: ClassVar[str] = ""

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
        """Feed the next piece of the reply; return the deltas it settled, in order.

        ``text`` is the newly decoded text (any size, from one character to the whole reply;
        decode with special tokens kept: the markers are what the parser reads).  ``token_ids``
        are the ids that text was decoded from, when the engine gives them: the base parser
        uses them only to count reasoning tokens (``reasoning_tokens``), and gpt-oss's parser,
        given ids on its first call, frames the reply by the ids instead of the text.

        The result is a list of ``(delta, has_tools)`` pairs.  ``delta`` is an OpenAI-shaped
        ``DeltaMessage`` holding one of ``content``, ``reasoning_content`` or ``tool_calls``;
        ``has_tools`` is True exactly when the delta carries tool-call data: a call's first
        delta (index, id, ``type`` ``"function"``, name, maybe the first argument text) or more
        of its JSON arguments.  The list is often empty: text that may be the start of a marker
        (``<tool_`` of ``<tool_call>``) is held until a later chunk settles it
        (``held_chars``).

        ``final=True`` says the reply has ended (pass it with the last chunk, or with ``""``):
        held text is settled as text, an unfinished call is closed or, when its name never
        arrived, recorded in ``dropped``.  Call it once per response, last; a parser serves
        one response."""
        raise NotImplementedError

    def parse_complete(self, text: str, token_ids: list[int] | None = None) -> ParsedMessage:
        """The whole reply at once: ``stream_chunk(text, token_ids, final=True)`` folded into one
        ``ParsedMessage`` (``content`` and ``reasoning_content`` joined, or None when empty;
        ``tool_calls`` complete, in order).  The same grammar as streaming, so the result equals
        the fold of any chunking's deltas.  On a fresh parser: it ends the response."""
        return fold_deltas(self.stream_chunk(text, token_ids, final=True), self.reasoning_tokens)

    @property
    def reasoning_tokens(self) -> int | None:
        """Tokens of the reply spent reasoning, counted from the ``token_ids`` given so far;
        None when no chunk carried token ids."""
        return None

    @property
    def dropped(self) -> list[DroppedCall]:
        """The calls the model wrote that no client saw, each with its reason: a tool the request
        does not offer (or ``tool_choice`` excludes), a call the reply's end cut before its name."""
        return []

    @property
    def held_chars(self) -> int:
        """Characters received but not yet emitted or consumed (a possible partial marker)."""
        return 0


@mypyc_attr(allow_interpreted_subclasses=True)
class BaseResponseParser(ResponseParser):
    summary = "text routed by the reasoning parser's tags and the tool dialect's open tags"
    streaming = "content and reasoning as they arrive (a split marker held until it resolves)"

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
        block_parser = tool if tool is not None else NoTools(request)
        self._markers = markers = RouterMarkers.of(block_parser, reasoning_parser)
        self._block = ToolBlock(block_parser)
        self._label = OpenTagLabel(reasoning_parser.start_label if reasoning_parser else "", markers.start_tag)
        in_reasoning = reasoning_parser is not None and reasoning_parser.initial_reasoning()
        self._state = _REASONING_START if in_reasoning else _PLAIN_START if block_parser.bare_start else _PLAIN
        self._lexers = Lexers(markers, self._label, block_parser)
        self._lane = TextLane(markers.plain, markers.reasoning, self._label)
        self._lane.follow(self._state)
        self._pending = ""
        self._base = 0  # absolute position of the buffer's first character
        self._tokens = ReasoningTokenCounter(in_reasoning)
        self._counting = False  # token ids have arrived: settle the counter after each chunk

    # ---- public surface -------------------------------------------------------------

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        """``ResponseParser.stream_chunk``: deltas as ``(delta, has_tools)``, has_tools True for
        tool-call deltas; ``final=True`` at the reply's end; ``token_ids`` count reasoning tokens."""
        if token_ids:
            self._tokens.note(self._base + len(self._pending), len(text), token_ids)
            self._counting = True
        pending = self._pending
        buf = pending + text if pending else text
        if self._state is _TOOL:
            block = self._block
            parser = block.parser
            if parser.run_open and not final and (run := parser.take_run(buf)) is not None:
                # The block's fast lane: argument text of the open call, one delta built here.
                consumed, index, arguments = run
                if consumed and block.replay.holding:
                    block.replay.advance(True, buf[:consumed])
                self._pending = buf[consumed:] if consumed < len(buf) else ""
                self._base += consumed
                if self._counting:
                    self._settle_tokens(final)
                return [(arguments_delta(index, arguments), True)] if index >= 0 else []
            # Inside a block, the usual verdict (the block still open) is taken here, without the routing loop.
            events: Events = []
            step = parser.feed_tool_block(buf, events, final)
            if step[1] == OPEN:
                consumed = step[0]
                if consumed and block.replay.holding:
                    block.replay.advance(step[2], buf[:consumed])
                if consumed < len(buf):
                    self._pending = buf[consumed:]
                elif pending:
                    self._pending = ""
                self._base += consumed
            else:
                self._route(buf, 0, events, final, step)
        elif final or (end := self._lane.take(buf)) < 0:
            events = []
            self._route(buf, 0, events, final)
        else:
            # The text lane: text of one channel, one delta built here.
            self._pending = buf[end:] if end < len(buf) else ""
            self._base += end
            if self._counting:
                self._settle_tokens(final)
            if not end:
                return []
            piece = buf if end == len(buf) else buf[:end]
            return [(DeltaMessage(piece) if self._lane.channel is CONTENT else DeltaMessage(None, piece), False)]
        if self._counting:
            self._settle_tokens(final)
        return deltas_of(events) if events else []

    @property
    def reasoning_tokens(self) -> int | None:
        """Reasoning tokens counted from the token ids given so far (None: no ids were given)."""
        return self._tokens.count if self._tokens.seen else None

    @property
    def held_chars(self) -> int:
        """Characters received but not yet emitted or consumed (a possible partial marker)."""
        return len(self._pending)

    @property
    def state(self) -> str:
        """Where the router stands: plain_start, plain, reasoning_start, reasoning, tool or after_block."""
        return self._state.name.lower()

    @property
    def dropped(self) -> list[DroppedCall]:
        """The calls no client saw, and why (``ResponseParser.dropped``)."""
        return self._block.parser.dropped

    # ---- the routing loop -------------------------------------------------------------

    def _route(self, buf: str, pos: int, events: Events, final: bool, verdict: BlockStep | None = None) -> None:
        """Read ``buf`` from ``pos``: lex an event in the current state, run its plan, until one waits."""
        entry = state = self._state
        while True:
            if state is _TOOL:
                rest = buf[pos:] if pos else buf
                if verdict is None:
                    verdict = self._block.parser.feed_tool_block(rest, events, final)
                buf, mark, start, end = self._read_verdict(buf, pos, rest, verdict)
                verdict = None
            else:
                mark, start, end = _LEXERS[state](self._lexers, buf, pos, events, final)
            if mark is _END or mark is _BLOCK_OPEN:  # WAITS: their plan is to wait where the router stands
                pos = end
                break
            step, after = _PLANS[state][mark]
            pos = step(self, buf, pos, start, end, events)
            state = self._state = after if after is not None else self._block.resume
            if mark in STOPS:
                break
        self._pending = buf[pos:]
        self._base += pos
        if state is not entry:
            self._lane.follow(state)

    def _read_verdict(self, buf: str, pos: int, rest: str, verdict: BlockStep) -> tuple[str, Mark, int, int]:
        """TOOL's lexer: the block parser read ``rest`` (``buf`` from ``pos``); its verdict is the event.
        A rejected block's text becomes the input again, its opening first (``start:end``)."""
        consumed, status, committed = verdict
        replay = self._block.replay
        if status == REJECTED:
            opening, again, at = replay.replay(rest)
            self._base = at - len(opening)
            return opening + again, Mark.BLOCK_REJECTED, 0, len(opening)
        end = pos + consumed
        if status == TRUNCATED:
            return buf, Mark.BLOCK_TRUNCATED, pos, end
        if consumed and replay.holding:
            replay.advance(committed, rest[:consumed])
        return buf, (_BLOCK_OPEN if status == OPEN else _BLOCK_CLOSED), end, end

    # ---- steps: what a plan does (``pos``: where the lexer started; the marker at ``start:end``) ----

    def _none(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        return end

    def _drop(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        return end  # the marker is consumed, and nothing of it goes out

    def _open_reasoning(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        self._label.opened()
        self._tokens.open(self._base + end)
        return end

    def _leading_open(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        """Reasoning at the reply's start: an open tag before any other text is dropped."""
        if start > pos and not buf[pos:start].isspace():
            events.append(Text(REASONING, buf[start:end]))  # text came first: not a leading tag, just text
        else:
            self._open_reasoning(buf, pos, start, end, events)
        return end

    def _close_reasoning(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        self._tokens.close(self._base + start)
        return end

    def _open_block(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        marker = buf[start:end]  # a rejected block replays the lead too
        self._enter(marker, start, self._markers.tag_of[marker], False)
        return end

    def _open_payload(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        self._enter(buf[start:end], start, "", True)
        return start  # the tag is the payload's first syntax

    def _open_bare(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        self._enter(buf[start:end], start, "", False)  # the leading whitespace is the block's opening
        return end

    def _enter(self, opening: str, start: int, open_tag: str, opening_in_payload: bool) -> None:
        resume = RETURNS_TO[self._state]
        if resume is _REASONING and self._markers.call_ends_reasoning:
            self._tokens.close(self._base + start)
            resume = _PLAIN
        self._block.open(opening, self._base + start, open_tag, resume, opening_in_payload)

    def _drop_separator(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        """Before another block the template's ``block_separator`` (or its end) is dropped; other whitespace is text."""
        if (cut := _layout_start(buf, start, end, self._markers.separator)) > start:
            events.append(Text(CONTENT if self._block.resume is _PLAIN else REASONING, buf[start:cut]))
        return end

    def _end_block(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        self._block.replay.clear()
        return end

    def _record_cut(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        """The reply ended before the block's call was named: its markup goes to ``dropped``."""
        block = self._block
        block.parser.record_cut(events, block.replay.take(buf[start:end]))
        return end

    def _replay_opening(self, buf: str, pos: int, start: int, end: int, events: Events) -> int:
        """Never became a call: the opening goes out as text, and what followed it is read again."""
        if end > start:
            events.append(Text(CONTENT if self._block.resume is _PLAIN else REASONING, buf[start:end]))
        return end

    def _settle_tokens(self, final: bool) -> None:
        """Tokens are settled before the held suffix, or before a block that may still
        turn back into text (and move a tag)."""
        if final:
            settled = self._base + len(self._pending) + 1
        elif self._state is _TOOL and self._block.replay.holding:
            settled = self._block.replay.start
        else:
            settled = self._base
        self._tokens.settle(settled)


def _layout_start(text: str, start: int, end: int, layout: str | None) -> int:
    """Where the template's ``layout`` begins in the whitespace ``text[start:end]`` before
    a block: the longest end of it that ``layout`` ends with too (None: all of it)."""
    if layout is None:
        return start
    n = min(end - start, len(layout))
    while n and not layout.endswith(text[end - n : end]):
        n -= 1
    return end - n


# ROUTING compiled: a state's lexer, and each plan's step as a function, indexed by state and mark.
_Lexer = Callable[[Lexers, str, int, Events, bool], tuple[Mark, int, int]]
_Step = Callable[[BaseResponseParser, str, int, int, int, Events], int]


def _no_lexer(lexers: Lexers, buf: str, pos: int, events: Events, final: bool) -> tuple[Mark, int, int]:
    raise AssertionError("TOOL has no lexer: the block parser's verdict is its event")


def _never(parser: BaseResponseParser, buf: str, pos: int, start: int, end: int, events: Events) -> int:
    raise AssertionError(f"a lexer of state {parser.state} reported a mark its state declares impossible")


_LEXERS: Final[tuple[_Lexer, ...]] = (
    Lexers.plain_start, Lexers.plain, Lexers.reasoning_start, Lexers.reasoning, _no_lexer, Lexers.after_block)
_PLANS: Final[tuple[tuple[tuple[_Step, State | None], ...], ...]] = tuple(
    tuple((getattr(BaseResponseParser, "_" + ROUTING[state][mark].step), ROUTING[state][mark].after)
          if mark not in NEVER[state] else (_never, RESUME) for mark in Mark)
    for state in State)
