"""ToolParser: one outer tool block at a time, and what crosses to the response parser.

The response parser hands a tool parser the text after an outer open tag;
``feed_tool_block`` consumes a prefix of it and says, in one ``BlockStep`` value, how
much it consumed, whether the block is still open, closed, rejected (it never held a
call: its text goes back to the reply) or truncated (the reply ended inside it before it
committed, and it is a call cut off: syntax, recorded in ``dropped``; see
``_cut_is_syntax``), and whether anything of it is committed (reached a client or
``dropped``).  A dialect implements only ``_consume_stream_payload`` for its
inner grammar and returns what it decided with the position: ``MORE`` (the payload goes
on), ``RUN`` (it goes on inside argument text: see below), ``PAYLOAD_CLOSED`` (its
grammar ended) or ``PAYLOAD_REJECTED`` (it is not the dialect's syntax); the driver here
owns the block's state, reads the outer close tag (``_consume_close``, which returns
whether it closed), and every call goes through one ``CallEmitter``
(``lmparse.tools.calls``): identity first, name filtering with dense indices, held
pre-name arguments, drop records.

While a dialect knows that a whole chunk without syntax characters can only be argument
text of the current call, it answers ``RUN``, and the driver keeps ``run_open`` while
the whole chunk was consumed.  Such a dialect implements ``take_run``, the block's fast
lane: the router asks it first while ``run_open``, and a chunk that can only be argument
text is answered with ``(consumed, the call's index, the argument text)``, of which the
router (the edge) makes the one delta itself, with no event; anything else (None) goes on
to ``feed_tool_block``, the general path.
"""

from __future__ import annotations

import enum
import logging
from typing import ClassVar, Final, Literal, NamedTuple, cast
from collections.abc import Callable

from ..markers import WHITESPACE
from ..messages import Deltas, FunctionCall, ToolCall
from ..request import ParserRequest
from .calls import NO_CALL, UNNAMED, CallEmitter, Events, DroppedCall, new_call_id
from .spaced import Spacing, spacing_for
from .syntax import CallSyntax
from .._mypyc import mypyc_attr

__all__ = ["ToolParser", "BlockStep", "OPEN", "CLOSED", "REJECTED", "TRUNCATED", "RUN_STEPS", "RunTake", "DroppedCall",
           "Deltas", "Events", "build_tool_calls", "new_call_id", "Payload", "PayloadStep", "MORE", "RUN",
           "PAYLOAD_CLOSED", "PAYLOAD_REJECTED"]

logger = logging.getLogger("lmparse")

# A block's status after a step.
BlockStatus = Literal["open", "closed", "rejected", "truncated"]
OPEN: Final[BlockStatus] = "open"
CLOSED: Final[BlockStatus] = "closed"
REJECTED: Final[BlockStatus] = "rejected"
TRUNCATED: Final[BlockStatus] = "truncated"  # all of the text consumed: the router records the block's markup


class Payload(enum.Enum):
    """What a dialect's payload hook decided (compared by identity: ``status is MORE``)."""

    MORE = "more"  # the payload goes on: wait for more text
    RUN = "run"  # it goes on inside argument text: the next chunk may be taken whole (the fast lane)
    CLOSED = "payload closed"  # its grammar ended: the outer close tag is the driver's
    REJECTED = "rejected"  # not the dialect's syntax (after a call: the block's payload ends there)


MORE: Final = Payload.MORE
RUN: Final = Payload.RUN
PAYLOAD_CLOSED: Final = Payload.CLOSED
PAYLOAD_REJECTED: Final = Payload.REJECTED
# A payload hook's answer: ``(position after what it consumed, what it decided)``.
PayloadStep = tuple[int, Payload]
# The fast lane's answer: ``(characters taken, the current call's index or -1, argument text)``.
RunTake = tuple[int, int, str]
# How many characters of stray text a block may hold before its close tag.
_STRAY_LIMIT: Final = 32


class BlockStep(NamedTuple):
    """What one ``feed_tool_block`` call did."""

    consumed: int  # characters of the text it was given
    status: BlockStatus
    committed: bool  # something of this block reached the client or ``dropped``


# ``BlockStep(...)`` runs a Python-level __new__; the hot path builds the tuple directly,
# and the step of an open, committed block that consumed up to 1 KiB (most chunks inside a
# block) is built once: ``RUN_STEPS[n]``.
_new_step: Final = tuple.__new__
RUN_STEPS: Final = tuple(_new_step(BlockStep, (n, OPEN, True)) for n in range(1025))


@mypyc_attr(allow_interpreted_subclasses=True)
class ToolParser:
    """Base of every tool dialect; one instance per response."""

    # Outer markers: a dialect declares them next to its grammar.
    tool_open_tags: ClassVar[tuple[str, ...]] = ()
    tool_close_tag: ClassVar[str | None] = None  # None: the block ends where the payload ends
    # Proper prefixes of the close tag that can end a chunk at a real token boundary,
    # longest first, verified against the family's tokenizers (tests/*prefixes*). They
    # document where real splits fall; the parser itself holds a split anywhere, with one
    # bounded look at the end of the text, so it needs no per-tokenizer fast path.
    tool_close_prefixes: ClassVar[tuple[str, ...]] = ()
    # The payload may also open at the very start of the reply with no open tag,
    # at one of these characters.
    bare_start: ClassVar[bool] = False
    bare_start_chars: ClassVar[str] = "{"
    # Markers that open a block without an outer open tag and are read as payload.
    payload_open_tags: ClassVar[tuple[str, ...]] = ()
    # Whitespace around and between blocks is text, except what the family's chat template
    # writes as part of the call syntax (read off the template, rendered with text before,
    # two calls and text after): ``block_lead`` before a block that follows text, and
    # ``block_separator`` between two blocks.  Either is dropped, or its end when only that
    # was written (DSML's "\n\n" as "\n"); other whitespace is text.  A separator of None
    # (a family with no template to read) drops all whitespace between blocks.
    block_lead: ClassVar[str] = ""
    block_separator: ClassVar[str | None] = ""
    # One line on the wire syntax, and how arguments stream, for ``lmparse parsers``.
    summary: ClassVar[str] = ""
    streaming: ClassVar[str] = ""
    # Strings a chat template writing this dialect contains, every one (a newline may be
    # written escaped); empty: the markers the parser reads (``lmparse.tools.autoselect``).
    template_markers: ClassVar[tuple[str, ...]] = ()
    # Markers of the family's message framing that are neither content nor calls (Kimi-K3's
    # ``<|open|>response<|sep|>``): the router drops them from the content.
    framing_markers: ClassVar[tuple[str, ...]] = ()
    # The block's markers that are single special tokens, where an engine decoding with
    # ``spaces_between_special_tokens`` writes a space on each side of each: a block whose
    # open tag is so spelled (list those spellings with ``spaced.spaced_open_tags``) or with
    # a space right after its open tag is read without those spaces (``lmparse.tools.spaced``).
    spaced_tokens: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """The dialect's call syntax as data, for generation constraints (None: not described)."""
        return None

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id,
                 calls: CallEmitter | None = None) -> None:
        """``calls``: the emitter, when a subclass builds it first (to give it to its collaborators)."""
        self.request = request
        self._calls = CallEmitter(request.allowed_names, id_factory, request.max_calls) if calls is None else calls
        self.stray_chars = 0  # characters dropped between a payload's end and its close tag
        self.start_block("")

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._calls.dropped

    @property
    def calls_emitted(self) -> int:
        return self._calls.calls_emitted

    # ---- block lifecycle (driven by the response parser) -------------------------

    def start_block(self, open_tag: str) -> None:
        """Reset the per-block state; ``open_tag`` is ``""`` for a bare start."""
        self._committed = False  # something of this block reached the client or ``dropped``
        self._payload_closed = False  # the dialect's grammar ended: the close tag is next
        self._bare = open_tag == ""
        self.run_open = False  # the next chunk may be taken whole by the dialect's fast lane (``take_run``)
        # Spaced special tokens: said by the open tag (a space before it or beside a token in
        # it), else by the block's first character.
        spacing = spacing_for(self.spaced_tokens) if self.spaced_tokens and open_tag else None
        spaced = spacing is not None and spacing.lays_out(open_tag)
        self._spacing: Spacing | None = spacing if spaced else None
        self._spacing_undecided = spacing is not None and not spaced
        self._spaced_by_lead = False  # only the space after the open tag said so
        # What the block consumed ends at a token (its open tag, first): a space next is layout.
        self._after_token = spacing is not None and spacing.ends_at_token(open_tag, len(open_tag))
        self._close_pending = False  # a spaced block closed at the end of the text: the space after it is its own
        self._reset_payload()

    @property
    def committed(self) -> bool:
        """Something of the current block reached the client or ``dropped``."""
        return self._committed

    @property
    def bare(self) -> bool:
        """The current block opened with no open tag (a bare start or a payload open tag)."""
        return self._bare

    def feed_tool_block(self, text: str, events: Events, final: bool = False) -> BlockStep:
        """Consume a prefix of ``text`` (which starts inside the block); what it decided goes to ``events``."""
        if self._spacing_undecided and text:
            self._spacing_undecided = False
            if text[0] == " ":
                self._spacing = spacing_for(self.spaced_tokens)
                self._spaced_by_lead = True
        spacing = self._spacing
        if spacing is None:
            return self._feed_block(text, events, final)
        if self._close_pending:
            if not text and not final:
                return _new_step(BlockStep, (0, OPEN, True))
            self._close_pending = False
            return _new_step(BlockStep, (1 if text.startswith(" ") else 0, CLOSED, True))
        body, removed = spacing.squeeze(text, self._after_token)
        step = self._feed_block(body, events, final)
        if step.status is TRUNCATED and self._spaced_by_lead:
            # Cut off before anything committed, a space after a tag is no evidence of a
            # spaced decoding: prose (``use <tool_call> tags``) reads as the plain text does.
            return _new_step(BlockStep, (len(text), REJECTED, False))
        self.run_open = False  # the lane would take a layout space before a token as argument text
        done = step.consumed
        consumed = len(text) if final and done == len(body) else Spacing.original(done, removed, len(text))
        if consumed:
            self._after_token = spacing.ends_at_token(text, consumed)
        if step.status == CLOSED and consumed == len(text) and self._after_token and not final:
            self._close_pending = True  # the space after the close tag may come next
            return _new_step(BlockStep, (consumed, OPEN, True))
        return step if consumed == done else _new_step(BlockStep, (consumed, step.status, step.committed))

    def _feed_block(self, text: str, events: Events, final: bool) -> BlockStep:
        """``feed_tool_block`` on text without layout spaces."""
        pos = 0
        if not self._payload_closed:
            pos, status = self._consume_stream_payload(text, events, final=final)
            if final and (status is MORE or status is RUN):
                if not self._committed and self._cut_is_syntax():
                    self._calls.abandon()  # the router records the markup (``record_cut``)
                    return _new_step(BlockStep, (len(text), TRUNCATED, False))
                status = self._finish_payload(events)
            if status is PAYLOAD_REJECTED:
                return _new_step(BlockStep, (pos, REJECTED, self._committed))
            if status is not PAYLOAD_CLOSED:
                # The fast lane stays open only while everything given was consumed.
                self.run_open = status is RUN and pos == len(text)
                if self._committed and pos <= 1024:
                    return RUN_STEPS[pos]
                return _new_step(BlockStep, (pos, OPEN, self._committed))
            self._payload_closed = True
            self.run_open = False
        if final and not self._committed:
            return _new_step(BlockStep, (pos, REJECTED, False))  # never became a call: the text goes back
        pos, closed = self._consume_close(text, pos, events, final)
        if closed:  # markup that held no call goes back as text
            return _new_step(BlockStep, (pos, CLOSED if self._committed else REJECTED, self._committed))
        return _new_step(BlockStep, (pos, OPEN, self._committed))

    def take_run(self, text: str) -> RunTake | None:
        """The fast lane, asked while ``run_open`` (before ``final``): ``text`` taken whole, or
        up to what may begin the syntax that ends the argument text, as argument text of the
        current call; None when it holds that syntax (``feed_tool_block`` reads it)."""
        return None

    def _consume_close(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, bool]:
        """The outer close tag after the payload: ``(position, whether the block closed)``."""
        close = self.tool_close_tag
        if close is None:
            return pos, True
        start = pos
        n = len(text)
        while pos < n and text[pos] in WHITESPACE:
            pos += 1
        if text.startswith(close, pos):
            return pos + len(close), True
        if n - pos < len(close) and close.startswith(text[pos:]):
            if not final:
                return start, False  # whitespace and maybe a partial close tag: wait
            return n, True  # at the end of input, whitespace and a cut-off close tag are the block's own
        if self._bare:
            return start, True  # no open tag, so no close tag is owed
        # A few stray characters before the close tag (a model's extra "}", say) are dropped
        # with the block; anything longer means the block ended without its tag, and the
        # text is not ours.
        window = pos + _STRAY_LIMIT + len(close)
        found = text.find(close, pos, window)
        if found != -1:
            self.stray_chars += found - pos
            logger.info("dropped %r between a tool call and %s", text[pos:found], close)
            return found + len(close), True
        if not final and n < window:
            return start, False
        return start, True

    # ---- dialect hooks ------------------------------------------------------------

    def _reset_payload(self) -> None:
        """Reset the dialect's per-block state."""

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        """Read the payload from the start of ``text``: ``(position, status)`` (see ``Payload``)."""
        raise NotImplementedError

    def _cut_is_syntax(self) -> bool:
        """The reply ended inside this block, which committed nothing and which the dialect
        has not rejected (what it read is still a viable prefix of its grammar): whether it
        is a call cut off -- syntax, recorded in ``dropped`` with its markup -- or text.

        A block opened by a tool open tag is syntax, even with nothing after the tag yet.
        A block with no open tag (a bare start, a payload open tag) is a call only once it
        proves itself (its first call commits), so one cut off before that is text."""
        return not self._bare

    def record_cut(self, events: Events, markup: str) -> None:
        """The router's half of a ``TRUNCATED`` step: the block's text, for ``dropped``."""
        self._calls.cut(events, markup)

    def _finish_payload(self, events: Events) -> Payload:
        """Input ended inside the payload of a block that committed (or a bare block that
        never proved itself): close what was emitted, invent nothing.

        A call whose name never arrived is not a call: after an earlier call of the block
        it is recorded as cut off; in an unproven bare block the whole block goes back to
        the text it came from.  Returns ``PAYLOAD_CLOSED``, or ``PAYLOAD_REJECTED`` for such a block."""
        if self._calls.state == UNNAMED:
            if not self._committed:
                return self._reject(events)
            self._calls.cut(events, None)  # its markup was consumed as the block's syntax
        else:
            self._end_call(events)
        return PAYLOAD_CLOSED

    def _reject(self, events: Events) -> Payload:
        """The block is not valid tool syntax: before anything was committed the response
        parser turns it back into text (``PAYLOAD_REJECTED``); afterwards the payload simply
        ends here (``PAYLOAD_CLOSED``).  A hook returns what this returns."""
        if self._committed:
            self._end_call(events)
            return PAYLOAD_CLOSED
        self._calls.abandon()
        return PAYLOAD_REJECTED

    def _commit(self) -> None:
        """The block's text read so far is syntax (it will be recorded), before any call or record."""
        self._committed = True

    def _cut(self, events: Events, markup: str, reason: str) -> None:
        """Markup of this block that is no call, recorded in ``dropped`` with ``reason``."""
        self._committed = True
        self._calls.cut(events, markup, reason)

    # ---- calls (through the shared emitter) ----------------------------------------

    def _begin_call(self) -> None:
        self._calls.begin()

    def _emit_name(self, events: Events, name: str, call_id: str | None = None) -> None:
        """The current call's name (the first one counts): its ``CallStart``, or a drop."""
        if self._calls.state == UNNAMED:
            self._committed = True
            self._calls.name(events, name, call_id)

    def _drop(self, events: Events, name: str | None, reason: str) -> None:
        self._committed = True
        self._calls.drop(events, name, reason)

    def _end_call(self, events: Events) -> None:
        calls = self._calls
        if calls.state == UNNAMED:
            self._committed = True  # recorded as a call with no name
        calls.end(events)

    @property
    def in_call(self) -> bool:
        return self._calls.state != NO_CALL

    @property
    def call_named(self) -> bool:
        return self._calls.named

    # ---- rendering (the inverse of parsing) ---------------------------------------

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """Wire text for ``(name, arguments_json)`` calls, as the model writes them."""
        raise NotImplementedError

    @classmethod
    def render_content(cls, content: str) -> str:
        """Wire text for ``content`` the model writes before its calls in the same reply
        (``render`` follows it).  Most dialects write it bare; one whose content is a message
        of its own (Muse's ``to=user``) wraps it and starts the next message."""
        return content


def build_tool_calls(deltas: Deltas) -> list[ToolCall]:
    """Fold streamed tool deltas into complete calls, by index."""
    by_index: dict[int, tuple[str | None, str | None, list[str]]] = {}
    for delta, has_tools in deltas:
        if not has_tools or delta.tool_calls is None:
            continue
        for tc in delta.tool_calls:
            entry = by_index.get(tc.index)
            if entry is None:
                entry = by_index[tc.index] = (tc.id, tc.function.name if tc.function else None, [])
            fn = tc.function
            if fn is not None and fn.arguments:
                entry[2].append(fn.arguments)
    return [
        ToolCall(id=cast(str, cid), function=FunctionCall(name or "", "".join(args)))  # the first delta has the id
        for _, (cid, name, args) in sorted(by_index.items())
    ]
