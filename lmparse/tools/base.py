"""ToolParser: one outer tool block at a time, call identity, name filtering.

The response parser hands a tool parser the text after an outer open tag; the
tool parser returns how much of it is consumed (``feed_tool_block``).  A dialect
implements only ``_consume_stream_payload`` for its inner grammar and reports its
end with ``_payload_closed``; the outer close tag and the call bookkeeping live here.

Every call goes through ``_begin_call`` once and every client-visible fragment
through ``_emit_delta``: the first delta of an accepted call carries id, type and
name; arguments seen before the name are held and released right after it; calls
to names the request does not expose are dropped (and recorded in ``dropped``)
without taking an index, so accepted calls keep dense indices from 0.
"""

from __future__ import annotations

import logging
import secrets
from typing import Callable

from ..messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall
from ..markers import WHITESPACE
from ..request import ParserRequest

__all__ = ["ToolParser", "DroppedCall", "Deltas", "build_tool_calls", "new_call_id"]

logger = logging.getLogger("lmparse")

Deltas = list[tuple[DeltaMessage, bool]]

# Per-call states.
_NO_CALL, _UNNAMED, _ACCEPTED, _DROPPED = range(4)
# How many characters of stray text a block may hold before its close tag.
_STRAY_LIMIT = 32


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


class DroppedCall:
    """A call the model wrote that no client saw, and why."""

    __slots__ = ("name", "reason")

    def __init__(self, name: str | None, reason: str) -> None:
        self.name = name
        self.reason = reason

    def __repr__(self) -> str:
        return f"DroppedCall(name={self.name!r}, reason={self.reason!r})"


class ToolParser:
    """Base of every tool dialect; one instance per response."""

    # Outer markers: a dialect declares them next to its grammar.
    tool_open_tags: tuple[str, ...] = ()
    tool_close_tag: str | None = None  # None: the block ends where the payload ends
    # Proper prefixes of the close tag that can end a chunk at a real token boundary,
    # longest first, verified against the family's tokenizers (tests/*prefixes*). They
    # document where real splits fall; the parser itself holds a split anywhere, with one
    # bounded look at the end of the text, so it needs no per-tokenizer fast path.
    tool_close_prefixes: tuple[str, ...] = ()
    # The payload may also open at the very start of the reply with no open tag,
    # at one of these characters.
    bare_start: bool = False
    bare_start_chars: str = "{"
    # Markers that open a block without an outer open tag and are read as payload.
    payload_open_tags: tuple[str, ...] = ()

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self.request = request
        self._allowed = request.allowed_names
        self._id_factory = id_factory
        self.dropped: list[DroppedCall] = []
        self.stray_chars = 0  # characters dropped between a payload's end and its close tag
        self.calls_emitted = 0
        self._call_state = _NO_CALL
        self.start_block("")

    # ---- block lifecycle (driven by the response parser) -------------------------

    def start_block(self, open_tag: str) -> None:
        """Reset the per-block state; ``open_tag`` is ``""`` for a bare start."""
        self.block_closed = False
        self.rejected = False
        self.committed = False  # something of this block reached the client or ``dropped``
        self._payload_closed = False
        self._bare = open_tag == ""
        # Set by a dialect while a whole chunk without syntax characters can only be
        # argument text of the current call: ``fast_feed(text, deltas) -> bool``
        # emits it in one step, or returns False to take the normal path.
        self.fast_feed: Callable[[str, Deltas], bool] | None = None
        self._merge_delta: DeltaMessage | None = None  # this chunk's delta of the current call
        self._merge_parts: list[str] = []
        self._reset_payload()

    def feed_tool_block(self, text: str, deltas: Deltas, final: bool = False) -> int:
        """Consume a prefix of ``text`` (which starts inside the block); return its length."""
        try:
            pos = 0
            if not self._payload_closed:
                pos = self._consume_stream_payload(text, deltas, final=final)
                if self.rejected:
                    return pos
                if not self._payload_closed:
                    if not final:
                        return pos
                    self._finish_payload(deltas)
                    self._payload_closed = True
                    if self.rejected:
                        return pos
            if final and not self.committed:
                self.rejected = True  # never became a call: the text goes back as it was
                return pos
            pos = self._consume_close(text, pos, final)
            if self.block_closed and not self.committed:
                self.block_closed, self.rejected = False, True  # markup that held no call
            return pos
        finally:
            if self._merge_parts:
                self._flush_merge()

    def _consume_close(self, text: str, pos: int, final: bool) -> int:
        close = self.tool_close_tag
        if close is None:
            self.block_closed = True
            return pos
        start = pos
        n = len(text)
        while pos < n and text[pos] in WHITESPACE:
            pos += 1
        if text.startswith(close, pos):
            self.block_closed = True
            return pos + len(close)
        if n - pos < len(close) and close.startswith(text[pos:]):
            if not final:
                return start  # whitespace and maybe a partial close tag: wait
            self.block_closed = True
            return n  # at the end of input, whitespace and a cut-off close tag are the block's own
        if self._bare:
            self.block_closed = True  # no open tag, so no close tag is owed
            return start
        # A few stray characters before the close tag (a model's extra "}", say) are dropped
        # with the block; anything longer means the block ended without its tag, and the
        # text is not ours.
        window = pos + _STRAY_LIMIT + len(close)
        found = text.find(close, pos, window)
        if found != -1:
            self.stray_chars += found - pos
            logger.info("dropped %r between a tool call and %s", text[pos:found], close)
            self.block_closed = True
            return found + len(close)
        if not final and n < window:
            return start
        self.block_closed = True
        return start

    # ---- dialect hooks ------------------------------------------------------------

    def _reset_payload(self) -> None:
        """Reset the dialect's per-block state."""

    def _consume_stream_payload(self, text: str, deltas: Deltas, *, final: bool) -> int:
        raise NotImplementedError

    def _finish_payload(self, deltas: Deltas) -> None:
        """Input ended inside the payload: close what was emitted, invent nothing.

        A call whose name never arrived is not a call: unless the block already
        committed, the whole block goes back to the text it came from."""
        if self._call_state == _UNNAMED:
            self._reject(deltas)
        else:
            self._end_call(deltas)

    def _reject(self, deltas: Deltas | None) -> None:
        """The block is not valid tool syntax: before anything was committed the response
        parser turns it back into text; afterwards the payload simply ends here."""
        if self.committed:
            self._end_call(deltas)
            self._payload_closed = True
        else:
            self._call_state = _NO_CALL
            self.rejected = True

    # ---- call identity and emission --------------------------------------------

    def _begin_call(self) -> None:
        self._call_state = _UNNAMED
        self._held: list[str] = []
        self._call_index = -1
        self._args_sent = False

    def _emit_delta(
        self,
        deltas: Deltas | None,
        name: str | None = None,
        arguments: str | None = None,
        call_id: str | None = None,
    ) -> None:
        if name is None:  # an argument fragment: the hot path
            if not arguments:
                return
            state = self._call_state
            if state == _ACCEPTED:
                self._args_sent = True
                if deltas and deltas[-1][0] is self._merge_delta:
                    self._merge_parts.append(arguments)  # same call, same chunk: one delta
                    return
                if self._merge_parts:
                    self._flush_merge()
                self._merge_delta = delta = DeltaMessage(
                    None, None, [DeltaToolCall(self._call_index, None, None, DeltaFunctionCall(None, arguments))]
                )
                deltas.append((delta, True))
            elif state == _UNNAMED:
                self._held.append(arguments)
            return
        if self._call_state != _UNNAMED:
            return  # the first name wins
        self.committed = True
        if self._allowed is not None and name not in self._allowed:
            self._drop(name, "not among the request's tools")
            return
        self._call_state = _ACCEPTED
        self._call_index = index = self.calls_emitted
        self.calls_emitted += 1
        held = "".join(self._held) if self._held else None
        self._held = []
        self._args_sent = held is not None
        if self._merge_parts:
            self._flush_merge()
        self._merge_delta = delta = DeltaMessage(
            None, None, [DeltaToolCall(index, call_id or self._id_factory(), "function", DeltaFunctionCall(name, held))]
        )
        deltas.append((delta, True))

    def _emit_arguments_run(self, deltas: Deltas, arguments: str) -> None:
        """``_emit_delta`` for a fast feed: a fresh chunk's only fragment of the current call."""
        if self._call_state == _ACCEPTED:
            deltas.append(
                (DeltaMessage(None, None, [DeltaToolCall(self._call_index, None, None, DeltaFunctionCall(None, arguments))]), True)
            )

    def _flush_merge(self) -> None:
        fn = self._merge_delta.tool_calls[0].function
        fn.arguments = (fn.arguments or "") + "".join(self._merge_parts)
        self._merge_parts = []

    def _drop(self, name: str | None, reason: str) -> None:
        self.committed = True
        self._call_state = _DROPPED
        self._held = []
        self.dropped.append(DroppedCall(name, reason))
        logger.info("tool call dropped: name=%r reason=%s", name, reason)

    def _end_call(self, deltas: Deltas | None) -> None:
        state = self._call_state
        if state == _ACCEPTED and not self._args_sent and deltas is not None:
            self._emit_delta(deltas, arguments="{}")
        elif state == _UNNAMED:
            self._drop(None, "no function name")
        self._call_state = _NO_CALL

    @property
    def in_call(self) -> bool:
        return self._call_state != _NO_CALL

    @property
    def call_named(self) -> bool:
        return self._call_state in (_ACCEPTED, _DROPPED)

    # ---- rendering (the inverse of parsing) ---------------------------------------

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """Wire text for ``(name, arguments_json)`` calls, as the model writes them."""
        raise NotImplementedError


def build_tool_calls(deltas: Deltas) -> list[ToolCall]:
    """Fold streamed tool deltas into complete calls, by index."""
    by_index: dict[int, list] = {}
    for delta, has_tools in deltas:
        if not has_tools:
            continue
        for tc in delta.tool_calls:
            entry = by_index.get(tc.index)
            if entry is None:
                entry = by_index[tc.index] = [tc.id, tc.function.name if tc.function else None, []]
            fn = tc.function
            if fn is not None and fn.arguments:
                entry[2].append(fn.arguments)
    return [
        ToolCall(id=cid, function=FunctionCall(name or "", "".join(args)))
        for _, (cid, name, args) in sorted(by_index.items())
    ]
