"""gpt-oss (Harmony): channels and recipients routed to reasoning, content and tool calls.

A Harmony reply is a sequence of messages ``[<|start|>]HEADER<|message|>BODY<|end|>``.
The header names a channel (``<|channel|>analysis``) and maybe a recipient
(``to=functions.NAME``); ``<|call|>`` and ``<|return|>`` also end a body.  The reply
starts after the prompt's ``<|start|>assistant``, so its first message has no start
marker.  The package, one job per module:

    markers.py  the markers and their o200k_harmony token ids
    framing.py  the four framing states and the table both input paths follow
    text.py     the text path: literal markers in decoded text
    tokens.py   the token path: o200k_harmony ids through openai-harmony's StreamableParser
    header.py   the header grammar (openai-harmony's, mirrored for the text path)
    router.py   messages to events: which channel goes where, call identity and filtering
    render.py   the inverse: an assistant turn as Harmony text

Token ids, when the engine sends them, are the source of truth; without them the literal
markers in the text are parsed with the same framing table, and tests check that the two
paths agree.  The encoding the token path needs is resolved when the parser is created: a
HarmonyEncoding passed as ``tokenizer``, else ``load_encoding()`` when it can answer
without a download (it has loaded already, or ``$TIKTOKEN_ENCODINGS_BASE`` names the
vocabulary's directory).  Otherwise, or when the vocabulary cannot be loaded, the parser
is text-only from the start (``encoding`` is None): token ids are then ignored, with a
warning, and the text's markers parsed.  Nothing switches paths mid-stream, and
``stream_chunk`` does no I/O.  A server that wants the token path calls
``load_encoding()`` at startup, which also fails fast when the vocabulary is missing.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, ClassVar, Literal, NamedTuple
from collections.abc import Iterable

from ...request import ParserRequest
from ...reasoning import ReasoningParser
from ...events import Events
from ...messages import Deltas, deltas_of
from ...tools.base import DroppedCall, ToolParser
from ...tools.syntax import CallSyntax, derive_call_syntax
from ..base import ResponseParser
from .framing import CALL, CHANNEL, CONSTRAIN, END, MARKER_IDS, MESSAGE, RETURN, START, STOPS, Framer, Framing
from .header import function_name, parse_header
from .render import render_reply
from .router import Router
from .text import TextLexer, TextMessages
from .tokens import TokenLexer, TokenMessages, encoding_at_hand, harmony_module, is_encoding, load_encoding

__all__ = [
    "HarmonyResponseParser", "HarmonyState", "Framing", "parse_header", "function_name", "render_reply",
    "load_encoding", "MARKER_IDS", "START", "CHANNEL", "MESSAGE", "CONSTRAIN", "END", "CALL", "RETURN", "STOPS",
]

logger = logging.getLogger("lmparse")


class HarmonyState(NamedTuple):
    """What a Harmony parser is doing (``HarmonyResponseParser.state``)."""

    source: Literal["tokens", "text"] | None  # what the response is framed from; None before its first input
    framing: Framing
    channel: str | None  # of the message whose body is open
    recipient: str | None


class HarmonyResponseParser(ResponseParser):
    """gpt-oss replies: token ids through openai-harmony, or the text's literal markers.

    The first chunk that carries token ids makes them the source of truth for the whole
    response (later text is ignored: a detokenizer's late flush repeats text the ids
    already gave); a response whose first content arrives without ids is parsed as text.
    ``tokenizer`` is used when it is a HarmonyEncoding; any other value (``create_parser``
    passes the family's tokenizer) is ignored.  ``tool_parser`` and ``reasoning_parser``
    are ignored: Harmony fixes both."""

    summary = "Harmony: <|channel|>analysis / commentary to=functions.NAME <|constrain|>json / final <|message|>…"
    streaming = "channel text as it arrives; call arguments as their JSON text arrives"

    markers = tuple(MARKER_IDS)
    frames_reply = True
    vocabulary_probe = (CHANNEL, MARKER_IDS[CHANNEL])

    @classmethod
    def call_syntax(cls) -> CallSyntax:
        """A call as the model writes it (``<|channel|>commentary to=functions.NAME <|constrain|>json``),
        read off ``render_reply``, for generation constraints."""
        return derive_call_syntax(_ModelCalls)

    @classmethod
    def reasoning_block(cls) -> tuple[str, str, bool]:
        """The analysis message a reply may start with: (its opening, what ends it before the
        next message, False: the prompt has not opened it)."""
        text = render_reply([("analysis", _THOUGHT), ("call", "f", "{}")], header="model")
        start, _, rest = text.partition(_THOUGHT)
        return start, rest[:rest.index(CHANNEL)], False

    def __init__(
        self,
        request: ParserRequest | None = None,
        *,
        tool_parser: ToolParser | None = None,
        reasoning_parser: ReasoningParser | None = None,
        tokenizer: object = None,
    ) -> None:
        harmony_module()  # fail at configuration time, not mid-stream
        super().__init__(request if request is not None else ParserRequest.accept_all())
        self._router = Router(self.request)
        self._text_only_reason: str | None = None
        self._encoding: Any = tokenizer if is_encoding(tokenizer) else self._default_encoding()
        self._lexer: TextLexer | TokenLexer | None = None

    def _default_encoding(self) -> Any:
        """``load_encoding()``, or None (a text-only parser, ``_text_only_reason`` says why) when
        it would have to download the vocabulary or cannot load it."""
        if not encoding_at_hand():
            self._text_only_reason = "no $TIKTOKEN_ENCODINGS_BASE, and load_encoding() was not called"
            return None
        try:
            return load_encoding()
        except Exception as exc:  # no vocabulary: the text still carries the markers
            self._text_only_reason = str(exc)
            return None

    @property
    def encoding(self) -> Any:
        """The HarmonyEncoding token ids are read with; None for a text-only parser."""
        return self._encoding

    @property
    def state(self) -> HarmonyState:
        lexer = self._lexer
        if lexer is None:
            return HarmonyState(None, Framing.OPENING, None, None)
        framer = lexer.framer
        source: Literal["tokens", "text"] = "tokens" if isinstance(lexer, TokenLexer) else "text"
        return HarmonyState(source, framer.state, framer.channel, framer.recipient)

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        events: Events = []
        lexer = self._lexer
        if lexer is None:
            if not text and not token_ids:
                return []
            lexer = self._lexer = self._open_lexer(bool(token_ids))
        if isinstance(lexer, TokenLexer):
            lexer.feed(token_ids or (), final, events)
        else:
            lexer.feed(text, final, events)
        return deltas_of(events) if events else []

    def _open_lexer(self, has_ids: bool) -> TextLexer | TokenLexer:
        """The path the response is framed on, chosen by its first input."""
        if has_ids and self._encoding is not None:
            messages = TokenMessages(self._encoding)
            return TokenLexer(Framer(self._router, messages), messages)
        if has_ids:  # a text-only parser reads the text the ids came with
            _warn_ids_ignored(self._text_only_reason or "")
        text_messages = TextMessages()
        return TextLexer(Framer(self._router, text_messages), text_messages)

    @property
    def reasoning_tokens(self) -> int | None:
        lexer = self._lexer
        return lexer.messages.reasoning_tokens if isinstance(lexer, TokenLexer) else None

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._router.dropped

    @property
    def held_chars(self) -> int:
        """Characters received but not yet emitted: a partial marker, an unfinished header,
        the reply's first tokens while they may still open a recipient."""
        return self._lexer.held_chars if self._lexer is not None else 0

    @staticmethod
    def render(
        reasoning: str | None = None,
        calls: Iterable[tuple[str, str]] = (),
        content: str | None = None,
        header: str = "template",
    ) -> str:
        """The completion text of one assistant turn: analysis, tool calls, final answer."""
        parts: list[tuple[str, ...]] = []
        if reasoning is not None:
            parts.append(("analysis", reasoning))
        parts.extend(("call", name, args) for name, args in calls)
        if content is not None:
            parts.append(("final", content))
        return render_reply(parts, header)


@functools.lru_cache(maxsize=8)
def _warn_ids_ignored(reason: str) -> None:
    """Once per reason and process: a text-only parser was given token ids."""
    logger.warning("gpt-oss: no Harmony encoding (%s); token ids are ignored and the text parsed", reason)


_THOUGHT = "lmparse_thought"


class _ModelCalls:
    """Harmony calls in the shape ``derive_call_syntax`` reads: no outer block, one message each."""

    tool_open_tags: ClassVar[tuple[str, ...]] = ()
    tool_close_tag = None

    @staticmethod
    def render(calls: list[tuple[str, str]]) -> str:
        return render_reply([("call", name, arguments) for name, arguments in calls], header="model")
