"""The token path: o200k_harmony ids framed by ``FRAMING``; openai-harmony parses each header
and decodes each body.

Sequences openai-harmony's StreamableParser would reject or swallow (a stray token between
messages, a stop inside a header) are framed here first, and each message gets a fresh
parser, so a header it rejects costs nothing but that header's text.  Only special-token
ids are markers here: a marker spelled with ordinary tokens stays text, while the text
path cannot tell it apart.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Final
from collections.abc import Sequence

from ...events import Events
from .framing import MARKER_EVENTS, MARKER_IDS, MESSAGE, START, Event, Framer, Framing
from .text import RECIPIENT_OPENERS

__all__ = ["load_encoding", "encoding_at_hand", "harmony_module", "is_encoding", "TokenLexer", "TokenMessages"]

INSTALL_HINT: Final = ("the 'gpt-oss' response parser needs openai-harmony: pip install openai-harmony "
                       "(the serve and harmony extras bring it: docs/install.md)")

_START_ID: Final = MARKER_IDS[START]
_MESSAGE_ID: Final = MARKER_IDS[MESSAGE]
BODY_WINDOW: Final = 4096  # body tokens one openai-harmony parser reads before a fresh one takes over
_EVENTS: Final = {MARKER_IDS[marker]: event for marker, event in MARKER_EVENTS.items()}


def harmony_module() -> Any:
    """The openai_harmony module, imported only when a gpt-oss parser is wanted."""
    try:
        import openai_harmony
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return openai_harmony


@functools.lru_cache(maxsize=1)
def load_encoding() -> Any:
    """The o200k_harmony encoding (loaded once per process).

    openai-harmony reads ``o200k_base.tiktoken`` from ``$TIKTOKEN_ENCODINGS_BASE`` or
    downloads it; a server calls this at startup to fail fast when neither works."""
    h = harmony_module()
    return h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS)


def encoding_at_hand() -> bool:
    """Whether ``load_encoding()`` can answer without a download: it has loaded already, or
    ``$TIKTOKEN_ENCODINGS_BASE`` names the vocabulary's directory (openai-harmony then reads
    only there).  A download may stall for seconds; no parser waits on one when created."""
    return load_encoding.cache_info().currsize > 0 or "TIKTOKEN_ENCODINGS_BASE" in os.environ


def is_encoding(tokenizer: object) -> bool:
    """Whether ``tokenizer`` is a HarmonyEncoding (checked without importing openai-harmony)."""
    return hasattr(tokenizer, "stop_tokens_for_assistant_actions")


class TokenMessages:
    """Headers and bodies through openai-harmony's StreamableParser, one parser per message."""

    __slots__ = ("reasoning_tokens", "_enc", "_h", "_header", "_role_known", "_parser", "_emitted", "_fed")
    verbatim_bodies = False

    def __init__(self, encoding: Any) -> None:
        self.reasoning_tokens = 0
        self._enc = encoding
        self._h = harmony_module()
        self._header: list[int] = []
        self._role_known = True
        self._parser: Any = None
        self._emitted = 0  # characters of the current body already routed
        self._fed = 0  # tokens the current parser has read

    @property
    def held_chars(self) -> int:
        return len(self.decode(self._header)) if self._header else 0

    def open_header(self, role_known: bool) -> None:
        self._role_known = role_known
        self._header = []

    def add_header(self, payload: Sequence[int]) -> None:
        self._header.extend(payload)

    def close_header(self) -> tuple[str | None, str | None] | str:
        header, self._header = self._header, []
        parser = self._new_parser(self._role_known)
        verdict: tuple[str | None, str | None] | str
        try:
            if not self._role_known:
                parser.process(_START_ID)
            for token in header:
                parser.process(token)
            parser.process(_MESSAGE_ID)
        except self._h.HarmonyError:  # a header openai-harmony rejects: its text is content
            verdict = self.decode(header)
            parser = self._body_parser()
        else:
            verdict = (parser.current_channel, parser.current_recipient)
        self._parser = parser
        self._emitted = self._fed = 0
        return verdict

    def drop_header(self) -> str:
        header, self._header = self._header, []
        return self.decode(header) if header else ""

    def open_body(self) -> None:
        self._parser = self._body_parser()
        self._emitted = self._fed = 0

    def body_text(self, payload: Sequence[int], reasoning: bool) -> str:
        """The text ``payload`` adds to the body.  openai-harmony's parser keeps every token
        of its message, so a long body moves to a fresh parser every ``BODY_WINDOW`` tokens,
        at a token that is whole characters by itself (no UTF-8 bytes can be pending after
        it): memory stays bounded, and the text is the same."""
        parts = []
        for token in payload:
            if reasoning:
                self.reasoning_tokens += 1
            try:
                self._parser.process(token)
                delta = self._parser.last_content_delta
            except self._h.HarmonyError:  # not expected in a body; keep going with a fresh parser
                delta = self.decode([token])
                self._parser = self._body_parser()
            if delta:
                self._emitted += len(delta)
                parts.append(delta)
            self._fed += 1
            if self._fed >= BODY_WINDOW and "\ufffd" not in self.decode([token]):
                self._parser, self._emitted, self._fed = self._body_parser(), 0, 0
        return "".join(parts)

    def end_body(self, stop: Sequence[int] | None) -> str:
        parser, self._parser = self._parser, None
        try:
            if stop is None:
                parser.process_eos()
            else:
                parser.process(stop[0])
            # Bytes of an unfinished UTF-8 character reach only the finished message.
            tail: str = parser.messages[-1].content[0].text[self._emitted :]
        except (self._h.HarmonyError, IndexError, AttributeError):
            tail = ""
        return tail

    def decode(self, tokens: Sequence[int]) -> str:
        try:
            text: str = self._enc.decode(list(tokens))
        except self._h.HarmonyError:  # an id outside the vocabulary
            if len(tokens) == 1:
                return "\ufffd"
            return "".join(self.decode([t]) for t in tokens)
        return text

    def _new_parser(self, role_known: bool) -> Any:
        h = self._h
        return h.StreamableParser(self._enc, role=h.Role.ASSISTANT if role_known else None)

    def _body_parser(self) -> Any:
        parser = self._new_parser(True)
        parser.process(_MESSAGE_ID)
        return parser


_TEXT: Final = Event.TEXT  # module names: enum attribute lookups are slow
_OPENING: Final = Framing.OPENING


class TokenLexer:
    """Turns token ids into framing events; holds the reply's first ordinary tokens while
    their text may still open a recipient (`` to=functions.NAME``)."""

    __slots__ = ("framer", "messages", "_held", "_held_chars")

    def __init__(self, framer: Framer[Sequence[int]], messages: TokenMessages) -> None:
        self.framer = framer
        self.messages = messages
        self._held: list[int] = []
        self._held_chars = 0

    @property
    def held_chars(self) -> int:
        return self._held_chars + self.messages.held_chars

    def feed(self, token_ids: Sequence[int], final: bool, out: Events) -> None:
        framer = self.framer
        for token in token_ids:
            event = _EVENTS.get(token, _TEXT)
            if framer.state is _OPENING:
                self._opening(token, event, out)
            else:
                framer.handle(event, (token,), out)
        if final:
            if self._held:
                self._release(out)
            framer.handle(Event.EOS, None, out)

    def _opening(self, token: int, event: Event, out: Events) -> None:
        if event is not Event.TEXT:
            if self._held:  # held text that was not a recipient after all
                self._release(out)
            self.framer.handle(event, (token,), out)
            return
        held = self._held
        held.append(token)
        text = self.messages.decode(held)
        self._held_chars = len(text)
        if text.startswith(RECIPIENT_OPENERS):
            self._held, self._held_chars = [], 0
            self.framer.handle(Event.RECIPIENT, held, out)  # the ids so far are header tokens
        elif not any(o.startswith(text) for o in RECIPIENT_OPENERS):
            self._release(out)

    def _release(self, out: Events) -> None:
        held, self._held, self._held_chars = self._held, [], 0
        self.framer.handle(Event.TEXT, held, out)
