"""BaseResponseParser: routes decoded text between content, reasoning and tool blocks.

States: ``plain -(reasoning open)-> reasoning -(reasoning close)-> plain`` and
``plain|reasoning -(tool open)-> tool -(block end)-> back where it came from``.
The parser owns one buffer, ``_pending``: the suffix whose meaning is not yet
stable (a possible partial tag in plain/reasoning mode, or what the tool parser
has not consumed).  ``parse_complete`` is ``stream_chunk(final=True)`` folded:
there is no second grammar.
"""

from __future__ import annotations

from ..markers import WHITESPACE, MarkerSet
from ..messages import DeltaMessage, ParsedMessage
from ..reasoning import ReasoningParser
from ..registry import ResponseParserManager
from ..request import ParserRequest
from ..tools.base import OPEN, REJECTED, Deltas, ToolParser, build_tool_calls

__all__ = ["ResponseParser", "BaseResponseParser", "fold_deltas"]

_PLAIN, _REASONING, _TOOL = range(3)


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


class ResponseParser:
    """What every response parser offers; one instance per response."""

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        raise NotImplementedError

    def parse_complete(self, text: str, token_ids: list[int] | None = None) -> ParsedMessage:
        return fold_deltas(self.stream_chunk(text, token_ids, final=True), self.reasoning_tokens)

    @property
    def reasoning_tokens(self) -> int | None:
        return None

    @property
    def dropped(self) -> list:
        return []

    @property
    def held_chars(self) -> int:
        """Characters received but not yet emitted or consumed (a possible partial marker)."""
        return 0


@ResponseParserManager.register_module("default")
class BaseResponseParser(ResponseParser):
    def __init__(
        self,
        request: ParserRequest,
        reasoning_parser: ReasoningParser | None = None,
        tool_parser: ToolParser | None = None,
    ) -> None:
        self.request = request
        self.tool_parser = tool = tool_parser if tool_parser is not None and request.tools_enabled else None
        # Payload open tags start a block and belong to its payload (Qwen3-Coder's bare
        # ``<function=``): the tool parser reads them, and they are text if it rejects them.
        payload_tags = tool.payload_open_tags if tool is not None else ()
        open_tags = (*tool.tool_open_tags, *payload_tags) if tool is not None else ()
        self._open_tags = frozenset(open_tags)
        self._payload_tags = frozenset(payload_tags)
        self._open_markers = MarkerSet(open_tags)
        if reasoning_parser is not None:
            start, end = reasoning_parser.start_tag, reasoning_parser.end_tag
            self._start_tag = start
            self._end_tag = end
            self._plain_markers = MarkerSet([start, *open_tags] if start else open_tags)
            self._reasoning_markers = MarkerSet([end, *open_tags])
            # At the start of a reply that begins in reasoning, an explicit open tag is dropped.
            self._fresh_reasoning_markers = MarkerSet([start, end, *open_tags] if start else [end, *open_tags])
            self._mode = _REASONING if reasoning_parser.starts_in_reasoning() else _PLAIN
        else:
            self._start_tag = self._end_tag = None
            self._plain_markers = self._open_markers
            self._mode = _PLAIN
        self._fresh = True  # nothing emitted yet
        self._bare_possible = tool is not None and tool.bare_start and self._mode == _PLAIN
        self._pending = ""
        self._suspended = _PLAIN
        self._after_block = False
        self._block_raw: list[str] = []  # the block's text while it may still turn back into text
        self._block_start = 0
        self._opening_in_payload = False
        # Absolute offsets, for reasoning-token accounting over the raw tag interval.
        self._base = 0  # absolute position of the buffer's first character
        self._reasoning_from = 0 if self._mode == _REASONING else None
        self._intervals: list[tuple[int, int]] = []
        self._token_starts: list[int] = []
        self._token_ptr = 0
        self._interval_ptr = 0
        self._reasoning_token_count = 0
        self._saw_tokens = False

    # ---- public surface -------------------------------------------------------------

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        deltas: Deltas = []
        if token_ids:
            self._note_tokens(len(text), token_ids)
        pending = self._pending
        self._run(pending + text if pending else text, deltas, final)
        if self._saw_tokens:
            self._count_reasoning_tokens(final)
        return deltas

    @property
    def reasoning_tokens(self) -> int | None:
        return self._reasoning_token_count if self._saw_tokens else None

    @property
    def held_chars(self) -> int:
        return len(self._pending)

    @property
    def dropped(self) -> list:
        return self.tool_parser.dropped if self.tool_parser is not None else []

    # ---- routing ----------------------------------------------------------------------

    def _run(self, buf: str, deltas: Deltas, final: bool) -> None:
        pos = 0
        n = len(buf)
        while True:
            mode = self._mode
            if mode == _TOOL:
                tool = self.tool_parser
                rest = buf[pos:] if pos else buf
                consumed, status, committed = tool.feed_tool_block(rest, deltas, final)
                if status == REJECTED:
                    # Never became a call: the opening text goes out as text, and what
                    # followed it is routed again (it may hold a real block).
                    opening = self._block_raw[0]
                    buf = "".join(self._block_raw[1:]) + rest
                    if self._opening_in_payload:
                        buf = buf[len(opening) :]  # the tool parser read the tag too
                    self._base = self._block_start + len(opening)
                    self._block_raw = []
                    self._mode = self._suspended
                    self._bare_possible = False
                    self._emit_text(deltas, self._mode, opening)
                    pos, n = 0, len(buf)
                    continue
                if consumed:
                    if not committed:
                        self._block_raw.append(rest[:consumed])
                    elif self._block_raw:
                        self._block_raw = []
                    pos += consumed
                if status == OPEN:
                    break
                self._block_raw = []
                self._mode = self._suspended
                self._after_block = True
                continue

            if self._after_block:
                # Whitespace after a block is dropped only if another block follows.
                ws_end = pos
                while ws_end < n and buf[ws_end] in WHITESPACE:
                    ws_end += 1
                if not final and (ws_end == n or self._open_markers.is_proper_prefix(buf, ws_end)):
                    break
                if self._open_markers.startswith_at(buf, ws_end):
                    pos = ws_end
                self._after_block = False

            if self._bare_possible:
                ws_end = pos
                while ws_end < n and buf[ws_end] in WHITESPACE:
                    ws_end += 1
                if ws_end == n and not final:
                    break
                self._bare_possible = False
                if ws_end < n and buf[ws_end] in self.tool_parser.bare_start_chars:
                    self._enter_tool(buf[pos:ws_end], self._base + pos, "")
                    pos = ws_end
                    continue

            if mode == _PLAIN:
                markers = self._plain_markers
            elif self._fresh:
                markers = self._fresh_reasoning_markers
            else:
                markers = self._reasoning_markers
            match = markers.search(buf, pos)
            if match is None:
                end = n if final else markers.held_start(buf, pos)
                if end > pos:
                    self._emit_text(deltas, mode, buf[pos:end])
                    pos = end
                break
            start, end = match.span()
            self._emit_text(deltas, mode, buf[pos:start])
            pos = end
            tag = match.group()
            if tag in self._payload_tags:
                self._enter_tool(tag, self._base + start, "")
                self._opening_in_payload = True
                pos = start  # the tag is the payload's first syntax
            elif tag in self._open_tags:
                self._enter_tool(tag, self._base + start, tag)
            elif mode == _REASONING and tag == self._end_tag:
                self._intervals.append((self._reasoning_from, self._base + start))
                self._reasoning_from = None
                self._mode = _PLAIN
            elif mode == _REASONING and not self._fresh:
                self._emit_text(deltas, mode, tag)  # text came first: not a leading tag, just text
            else:  # the reasoning open tag: enter reasoning, or drop a leading one
                self._mode = _REASONING
                self._reasoning_from = self._base + end
            self._fresh = False
        self._pending = buf[pos:]
        self._base += pos

    def _enter_tool(self, opening: str, abs_start: int, open_tag: str) -> None:
        self._opening_in_payload = False
        self._suspended = self._mode
        self._mode = _TOOL
        self._block_raw = [opening]
        self._block_start = abs_start
        self.tool_parser.start_block(open_tag)

    def _emit_text(self, deltas: Deltas, mode: int, text: str) -> None:
        if not text:
            return
        if not text.isspace():  # GLM-4.6 replies open with "\n<think>": the tag is still the leading one
            self._fresh = False
        if deltas:
            last = deltas[-1][0]
            if mode == _PLAIN:
                if last.content is not None and last.tool_calls is None:
                    last.content += text
                    return
            elif last.reasoning_content is not None and last.tool_calls is None:
                last.reasoning_content += text
                return
        if mode == _PLAIN:
            deltas.append((DeltaMessage(content=text), False))
        else:
            deltas.append((DeltaMessage(reasoning_content=text), False))

    # ---- reasoning tokens ---------------------------------------------------------------

    def _note_tokens(self, length: int, token_ids: list[int]) -> None:
        """Remember where each token of this chunk starts in the raw text.

        Engines usually send one token per chunk, which is exact; for several tokens
        in one chunk their starts are spread evenly over the chunk's text."""
        self._saw_tokens = True
        start = self._base + len(self._pending)  # where this chunk begins in the raw text
        k = len(token_ids)
        if k == 1:
            self._token_starts.append(start)
        else:
            self._token_starts.extend(start + (i * length) // k for i in range(k))

    def _count_reasoning_tokens(self, final: bool) -> None:
        """Classify tokens whose position's mode is settled: before the held suffix, or
        before a block that may still turn back into text (and move a tag)."""
        if final:
            settled = self._base + len(self._pending) + 1
        elif self._mode == _TOOL and self._block_raw:
            settled = self._block_start
        else:
            settled = self._base
        starts, intervals = self._token_starts, self._intervals
        i, j = self._token_ptr, self._interval_ptr
        count = 0
        while i < len(starts) and starts[i] < settled:
            p = starts[i]
            while j < len(intervals) and intervals[j][1] <= p:
                j += 1
            if j < len(intervals):
                if intervals[j][0] <= p:
                    count += 1
            elif self._reasoning_from is not None and self._reasoning_from <= p:
                count += 1
            i += 1
        self._reasoning_token_count += count
        del starts[:i]
        self._token_ptr, self._interval_ptr = 0, j
