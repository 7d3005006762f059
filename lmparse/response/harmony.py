"""gpt-oss (Harmony): channels and recipients routed to reasoning, content and tool calls.

A Harmony reply is a sequence of messages ``[<|start|>]HEADER<|message|>BODY<|end|>``.
The header names a channel (``<|channel|>analysis``) and maybe a recipient
(``to=functions.NAME``); ``<|call|>`` and ``<|return|>`` also end a body.  The reply
starts after the prompt's ``<|start|>assistant``, so its first message has no start
marker.  Routing, shared by both input paths:

    final channel                        -> content (whatever the recipient)
    recipient functions.NAME             -> a tool call NAME, the body streams as arguments
    any other recipient (python, browser) -> reasoning: the model talking to a tool the
                                            client does not host is part of its work
    analysis channel                     -> reasoning
    commentary without recipient, none   -> content (commentary preambles are user-facing)

Calls to names the request does not expose are dropped (recorded in ``dropped``) without
taking an index.  A request that disables tools (``tool_choice="none"``, no tools) gets
no calls at all: such a body stays visible as text of its channel, and is recorded too.

Token ids, when the engine sends them, drive openai-harmony's ``StreamableParser``
(headers are parsed by it, bodies decoded by it).  Without ids the literal markers in
the text are parsed with the same framing and ``parse_header``, which mirrors
openai-harmony's header grammar; tests check the two paths agree.  (Only special-token
ids are markers on the token path: a marker spelled with ordinary tokens stays text
there, while the text path cannot tell it apart.)  Framing states, identical on both
paths::

    state     | START          | CHANNEL          | MESSAGE       | END/CALL/RETURN | text, EOS
    OPENING   | -> HEADER (*)  | -> HEADER (*)    | -> HEADER (*) | -> HEADER (*)   | ` to=`: HEADER; else BODY (plain)
    HEADER    | text->content, | part of header   | parse: BODY;  | text->content,  | part of header;
              | -> HEADER      |                  | bad: content  | -> BETWEEN      | EOS: text->content
    BODY      | end, -> HEADER | end, -> HEADER   | body text     | end, -> BETWEEN | body text; EOS: end
    BETWEEN   | -> HEADER      | -> HEADER        | -> HEADER (*) | ignored         | -> BODY (plain content)

(*) the marker is then handled by HEADER.  ``<|constrain|>`` counts as text (header text
inside a header).  A header that never reaches ``<|message|>`` or that openai-harmony
rejects is not syntax after all: its text goes to content, so a bad sequence loses no
text and never raises out of ``stream_chunk``.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any, Callable, Iterable, Sequence

from ..markers import MarkerSet
from ..messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from ..registry import ResponseParserManager
from ..request import ParserRequest
from ..tools.base import Deltas, DroppedCall, new_call_id
from .base import ResponseParser

__all__ = ["HarmonyResponseParser", "parse_header", "render_reply", "load_encoding"]

logger = logging.getLogger("lmparse")

START, CHANNEL, MESSAGE, CONSTRAIN = "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"
END, CALL, RETURN = "<|end|>", "<|call|>", "<|return|>"
STOPS = (END, CALL, RETURN)
# o200k_harmony ids of the markers (single special tokens; see ECOSYSTEM.md §5).
MARKER_IDS = {
    START: 200006, CHANNEL: 200005, MESSAGE: 200008, CONSTRAIN: 200003, END: 200007, CALL: 200012, RETURN: 200002,
}
_START_ID, _CHANNEL_ID, _MESSAGE_ID = MARKER_IDS[START], MARKER_IDS[CHANNEL], MARKER_IDS[MESSAGE]
_STOP_IDS = frozenset(MARKER_IDS[m] for m in STOPS)
_MARKER_ID_SET = frozenset(MARKER_IDS.values())
# A first message may carry its recipient before the channel, as the official template
# renders it: `<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>`.
_RECIPIENT_OPENERS = (" to=", "to=")
_FUNCTIONS = "functions."
_ROLES = frozenset(("user", "assistant", "system", "developer", "tool"))
# Rust's char::is_whitespace and u8::is_ascii_whitespace, which openai-harmony's header
# parser uses (Python's str.split and str.strip disagree on a few control characters).
_UNICODE_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
_CHANNEL_VALUE = re.compile(f"[^<{_UNICODE_WS}]*")
_ASCII_SPLIT = re.compile("[ \t\n\x0c\r]+")

_OPENING, _HEADER, _BODY, _BETWEEN = range(4)
_CONTENT, _REASONING, _CALL, _DISCARD = range(4)

_INSTALL_HINT = "the 'gpt-oss' response parser needs openai-harmony: pip install 'lmparse[harmony]'"


def _harmony() -> Any:
    """The openai_harmony module, imported only when a gpt-oss parser is wanted."""
    try:
        import openai_harmony
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return openai_harmony


@functools.lru_cache(maxsize=1)
def load_encoding() -> Any:
    """The o200k_harmony encoding (loaded once per process).

    openai-harmony reads ``o200k_base.tiktoken`` from ``$TIKTOKEN_ENCODINGS_BASE`` or
    downloads it; a server calls this at startup to fail fast when neither works."""
    h = _harmony()
    return h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS)


# ---- header grammar (mirrors openai-harmony's, for the text path) ------------------------


def parse_header(header: str, role_known: bool = True) -> tuple[str | None, str | None] | None:
    """``(channel, recipient)`` of a message header as openai-harmony reads it, or None
    where it raises.  ``header`` is the text between the start marker (or the reply's
    start, ``role_known``) and ``<|message|>``, special markers written out."""
    channel = None
    at = header.find(CHANNEL)
    if at != -1:
        after = header[at + len(CHANNEL) :]
        channel = _CHANNEL_VALUE.match(after).group()
        if not channel:
            return None
        header = header[:at] + after[len(channel) :]
    header = header.strip(_UNICODE_WS)
    if CONSTRAIN in header:  # `to=x<|constrain|>json` is two words
        header = header.replace(CONSTRAIN, " " + CONSTRAIN).strip(_UNICODE_WS)
    parts = [p for p in _ASCII_SPLIT.split(header) if p]
    role = "assistant"
    if not role_known:
        if not parts:
            return None
        if parts[0] in _ROLES:
            role = parts[0]
        elif len(parts) > 1 or parts[0].startswith("to="):
            role = "tool"  # an unknown author addressing someone: a tool's message
            del parts[0]
        else:
            return None
    if parts and parts[0] == role:
        del parts[0]
    recipient = None
    if parts:
        count = len(parts)
        last = parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif count == 1:
            recipient = last
        else:  # `last` is the content type; the word before it is the recipient
            raw = parts.pop()
            recipient = raw[3:] if raw.startswith("to=") else raw
        if parts:
            return None  # words left over: openai-harmony rejects the header
    return channel, recipient


def function_name(recipient: str | None) -> str | None:
    """The tool name a recipient addresses (``functions.bash<|channel|>commentary`` ->
    ``bash``); ``""`` for a bare ``functions.``; None when it is not a function."""
    if not recipient:
        return None
    clean = recipient.split("<|", 1)[0].strip()
    return clean[len(_FUNCTIONS) :] if clean.startswith(_FUNCTIONS) else None


# ---- routing: one message at a time to deltas -------------------------------------------


class _Router:
    """Turns framed messages into deltas: call identity, filtering, dense indices, and
    one delta per channel run within a chunk (``out`` is the current chunk's list)."""

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        self._allowed = request.allowed_names
        self._tools_enabled = request.tools_enabled
        self._id_factory = id_factory
        self.dropped: list[DroppedCall] = []
        self.calls_emitted = 0
        self.counting = False  # this body's tokens are reasoning tokens
        self.out: Deltas = []
        self._route = _CONTENT
        self._args_sent = False
        self._call_index = -1
        self._open: DeltaMessage | None = None  # the delta this chunk is still extending
        self._open_kind = -1
        self._parts: list[str] = []

    def begin(self, channel: str | None, recipient: str | None) -> None:
        name = function_name(recipient) if channel != "final" else None
        if name is None:
            if channel == "final":
                route = _CONTENT
            else:
                route = _REASONING if recipient or channel == "analysis" else _CONTENT
        elif not self._tools_enabled:
            # tool_choice "none" or no tools: nothing may become a call, and the body stays
            # visible as text of its channel rather than vanishing.
            self._drop(name, "tool calls are disabled for this request; its arguments went to the text")
            route = _REASONING if channel == "analysis" else _CONTENT
        elif not name:
            self._drop(None, "no function name")
            route = _DISCARD
        elif self._allowed is not None and name not in self._allowed:
            self._drop(name, "not among the request's tools")
            route = _DISCARD
        else:
            route = _CALL
            self._call_index = index = self.calls_emitted
            self.calls_emitted += 1
            self._args_sent = False
            self.flush()
            call = DeltaToolCall(index, self._id_factory(), "function", DeltaFunctionCall(name, None))
            self._open = delta = DeltaMessage(None, None, [call])
            self._open_kind = _CALL
            self.out.append((delta, True))
        self._route = route
        self.counting = channel == "analysis" or route == _REASONING

    def text(self, text: str) -> None:
        if not text:
            return
        route = self._route
        if route == _DISCARD:
            return
        if route == _CALL:
            self._args_sent = True
        if route == self._open_kind and self._open is not None:
            self._parts.append(text)
            return
        self.flush()
        if route == _CONTENT:
            delta = DeltaMessage(content="")
        elif route == _REASONING:
            delta = DeltaMessage(reasoning_content="")
        else:
            delta = DeltaMessage(None, None, [DeltaToolCall(self._call_index, None, None, DeltaFunctionCall(None, ""))])
        self.out.append((delta, route == _CALL))
        self._open, self._open_kind, self._parts = delta, route, [text]

    def end(self) -> None:
        if self._route == _CALL and not self._args_sent:
            self.text("{}")  # a call always carries an arguments object
        self._route = _CONTENT
        self.counting = False

    def flush(self) -> None:
        """Write the parts of the open delta; the next delta starts fresh."""
        delta = self._open
        if delta is None:
            return
        if self._parts:
            joined = "".join(self._parts)
            if delta.tool_calls:
                fn = delta.tool_calls[0].function
                fn.arguments = (fn.arguments or "") + joined
            elif delta.content is not None:
                delta.content += joined
            else:
                delta.reasoning_content += joined
        self._open, self._open_kind, self._parts = None, -1, []

    def _drop(self, name: str | None, reason: str) -> None:
        self.dropped.append(DroppedCall(name, reason))
        logger.info("tool call dropped: name=%r reason=%s", name, reason)


# ---- the text path: literal markers --------------------------------------------------------


class _TextFramer:
    """Frames decoded text that kept Harmony's special tokens; holds a partial marker."""

    _ALL = MarkerSet(MARKER_IDS)
    _IN_HEADER = MarkerSet((MESSAGE, START) + STOPS)  # `<|channel|>`, `<|constrain|>` are header text
    _IN_BODY = MarkerSet((START, CHANNEL) + STOPS)  # `<|message|>`, `<|constrain|>` are body text

    def __init__(self, router: _Router) -> None:
        self._router = router
        self._state = _OPENING
        self._pending = ""
        self._header: list[str] = []
        self._role_known = True

    def feed(self, text: str, final: bool) -> None:
        buf = self._pending + text if self._pending else text
        pos, n = 0, len(buf)
        hold = False
        while pos < n and not hold:
            state = self._state
            if state == _BODY:
                pos, hold = self._in_body(buf, pos, final)
            elif state == _HEADER:
                pos, hold = self._in_header(buf, pos, final)
            elif state == _BETWEEN:
                pos, hold = self._between(buf, pos, final)
            else:
                pos, hold = self._opening(buf, pos, final)
        self._pending = buf[pos:]
        if final:
            if self._state == _HEADER:
                self._lose_header()
            elif self._state == _BODY:
                self._router.end()
            self._state = _BETWEEN

    def _in_body(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        router = self._router
        match = self._IN_BODY.search(buf, pos)
        if match is None:
            end = len(buf) if final else self._IN_BODY.held_start(buf, pos)
            router.text(buf[pos:end])
            return end, True
        start, end = match.span()
        router.text(buf[pos:start])
        router.end()
        marker = match.group()
        if marker == START:
            self._begin_header(False)
            return end, False
        if marker == CHANNEL:
            self._begin_header(True)
            return start, False  # the marker is header text
        self._state = _BETWEEN
        return end, False

    def _in_header(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        match = self._IN_HEADER.search(buf, pos)
        if match is None:
            end = len(buf) if final else self._IN_HEADER.held_start(buf, pos)
            self._header.append(buf[pos:end])
            return end, True
        start, end = match.span()
        self._header.append(buf[pos:start])
        marker = match.group()
        if marker == MESSAGE:
            self._finish_header()
        else:
            self._lose_header()
            if marker == START:
                self._begin_header(False)
            else:
                self._state = _BETWEEN
        return end, False

    def _between(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        marker = self._ALL.startswith_at(buf, pos)
        if marker == START:
            self._begin_header(False)
            return pos + len(START), False
        if marker == CHANNEL or marker == MESSAGE:
            self._begin_header(True)
            return pos, False
        if marker in STOPS:
            return pos + len(marker), False
        if not final and marker is None and self._ALL.is_proper_prefix(buf, pos):
            return pos, True
        self._router.begin(None, None)  # text outside any message
        self._state = _BODY
        return pos, False

    def _opening(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        if self._ALL.startswith_at(buf, pos) is not None or buf.startswith(_RECIPIENT_OPENERS, pos):
            self._begin_header(True)
            return pos, False
        if not final and (
            self._ALL.is_proper_prefix(buf, pos)
            or (len(buf) - pos < 4 and any(o.startswith(buf[pos:]) for o in _RECIPIENT_OPENERS))
        ):
            return pos, True
        self._router.begin(None, None)  # not Harmony at all: a server that dropped the markers
        self._state = _BODY
        return pos, False

    def _begin_header(self, role_known: bool) -> None:
        self._state = _HEADER
        self._role_known = role_known
        self._header = []

    def _finish_header(self) -> None:
        header = "".join(self._header)
        self._header = []
        parsed = parse_header(header, self._role_known)
        if parsed is None:
            self._router.begin(None, None)
            self._router.text(header)
        else:
            self._router.begin(*parsed)
        self._state = _BODY

    def _lose_header(self) -> None:
        header = "".join(self._header)
        self._header = []
        if header:
            self._router.begin(None, None)
            self._router.text(header)
            self._router.end()


# ---- the token path: openai-harmony's StreamableParser -------------------------------------


class _TokenFramer:
    """Frames token ids; openai-harmony parses each header and decodes each body.

    Sequences StreamableParser would reject or swallow (a stray token between messages,
    a stop inside a header) are framed here first, and each message gets a fresh parser,
    so a header it rejects costs nothing but that header's text."""

    def __init__(self, encoding: Any, router: _Router) -> None:
        h = _harmony()
        self._enc = encoding
        self._new_parser = lambda known: h.StreamableParser(encoding, role=h.Role.ASSISTANT if known else None)
        self._error = h.HarmonyError
        self._router = router
        self._state = _OPENING
        self._ids: list[int] = []  # the opening, or the current header
        self._role_known = True
        self._parser: Any = None
        self._emitted = 0  # characters of the current body already routed
        self.reasoning_tokens = 0

    def feed(self, token_ids: Sequence[int], final: bool) -> None:
        for token in token_ids:
            state = self._state
            if state == _BODY:
                self._in_body(token)
            elif state == _HEADER:
                self._in_header(token)
            elif state == _BETWEEN:
                self._between(token)
            else:
                self._opening(token)
        if final:
            state = self._state
            if state == _OPENING and self._ids:
                self._plain(self._ids)
                state = self._state
            if state == _HEADER:
                self._lose_header()
            elif state == _BODY:
                self._end_body(None)
            self._state = _BETWEEN

    def _in_body(self, token: int) -> None:
        if token in _STOP_IDS:
            self._end_body(token)
            self._state = _BETWEEN
        elif token == _START_ID or token == _CHANNEL_ID:
            self._end_body(None)
            self._begin_header(token)
        else:
            self._body_token(token)

    def _in_header(self, token: int) -> None:
        if token == _MESSAGE_ID:
            self._finish_header()
        elif token == _START_ID or token in _STOP_IDS:
            self._lose_header()
            if token == _START_ID:
                self._begin_header(token)
            else:
                self._state = _BETWEEN
        else:
            self._ids.append(token)

    def _between(self, token: int) -> None:
        if token == _START_ID or token == _CHANNEL_ID:
            self._begin_header(token)
        elif token == _MESSAGE_ID:
            self._begin_header(None)
            self._finish_header()
        elif token not in _STOP_IDS:
            self._plain([token])  # text outside any message

    def _opening(self, token: int) -> None:
        if token in _MARKER_ID_SET:
            if self._ids:  # held text that was not a recipient after all
                self._plain(self._ids)
                self._in_body(token)
            else:
                self._begin_header(None)
                self._in_header(token)
            return
        self._ids.append(token)
        text = self._decode(self._ids)
        if text.startswith(_RECIPIENT_OPENERS):
            self._state = _HEADER  # the ids so far are header tokens
        elif not any(o.startswith(text) for o in _RECIPIENT_OPENERS):
            self._plain(self._ids)

    def _begin_header(self, token: int | None) -> None:
        """A header opened by ``<|start|>`` (role unknown) or by ``<|channel|>`` / nothing
        (an assistant message whose role the prompt gave)."""
        self._state = _HEADER
        self._role_known = token != _START_ID
        self._ids = [token] if token == _CHANNEL_ID else []

    def _finish_header(self) -> None:
        header, self._ids = self._ids, []
        parser = self._new_parser(self._role_known)
        try:
            if not self._role_known:
                parser.process(_START_ID)
            for token in header:
                parser.process(token)
            parser.process(_MESSAGE_ID)
        except self._error:  # a header openai-harmony rejects: its text is content
            self._router.begin(None, None)
            self._router.text(self._decode(header))
            parser = self._body_parser()
        else:
            self._router.begin(parser.current_channel, parser.current_recipient)
        self._parser = parser
        self._emitted = 0
        self._state = _BODY

    def _lose_header(self) -> None:
        header, self._ids = self._ids, []
        if header:
            self._router.begin(None, None)
            self._router.text(self._decode(header))
            self._router.end()

    def _plain(self, tokens: list[int]) -> None:
        """Content outside Harmony framing: decoded by a parser opened on an empty header."""
        self._ids = []
        self._router.begin(None, None)
        self._parser = self._body_parser()
        self._emitted = 0
        self._state = _BODY
        for token in tokens:
            self._body_token(token)

    def _body_parser(self) -> Any:
        parser = self._new_parser(True)
        parser.process(_MESSAGE_ID)
        return parser

    def _body_token(self, token: int) -> None:
        router = self._router
        if router.counting:
            self.reasoning_tokens += 1
        try:
            self._parser.process(token)
            delta = self._parser.last_content_delta
        except self._error:  # not expected in a body; keep going with a fresh parser
            delta = self._decode([token])
            self._parser = self._body_parser()
        if delta:
            self._emitted += len(delta)
            router.text(delta)

    def _end_body(self, stop: int | None) -> None:
        parser = self._parser
        try:
            if stop is None:
                parser.process_eos()
            else:
                parser.process(stop)
            # Bytes of an unfinished UTF-8 character reach only the finished message.
            tail = parser.messages[-1].content[0].text[self._emitted :]
        except (self._error, IndexError, AttributeError):
            tail = ""
        self._router.text(tail)
        self._router.end()
        self._parser = None

    def _decode(self, tokens: list[int]) -> str:
        try:
            return self._enc.decode(tokens)
        except self._error:  # an id outside the vocabulary
            if len(tokens) == 1:
                return "\ufffd"
            return "".join(self._decode([t]) for t in tokens)


# ---- the response parser ---------------------------------------------------------------------

@ResponseParserManager.register_module("gpt-oss")
class HarmonyResponseParser(ResponseParser):
    """gpt-oss replies: token ids through openai-harmony, or the text's literal markers.

    The first chunk that carries token ids makes them the source of truth for the whole
    response (later text is ignored: a detokenizer's late flush repeats text the ids
    already gave); a response whose first content arrives without ids is parsed as text.
    ``tool_parser`` and ``reasoning_parser`` are accepted for ``create_parser`` and
    ignored: Harmony fixes both."""

    def __init__(
        self,
        request: ParserRequest | None = None,
        tokenizer: Any = None,
        tool_parser: str | None = None,
        reasoning_parser: str | None = None,
    ) -> None:
        _harmony()  # fail at configuration time, not mid-stream
        self.request = request if request is not None else ParserRequest.accept_all()
        self._router = _Router(self.request)
        # A HarmonyEncoding passed as the tokenizer is used as is; anything else is ignored.
        self._encoding = tokenizer if hasattr(tokenizer, "stop_tokens_for_assistant_actions") else None
        self._framer: _TextFramer | _TokenFramer | None = None

    def stream_chunk(self, text: str, token_ids: list[int] | None = None, final: bool = False) -> Deltas:
        router = self._router
        router.out = out = []
        framer = self._framer
        if framer is None:
            if token_ids:
                framer = self._token_framer()
            elif text:
                framer = _TextFramer(router)
            elif not final:
                return out
            self._framer = framer
        if isinstance(framer, _TokenFramer):
            framer.feed(token_ids or (), final)
        elif framer is not None:
            framer.feed(text, final)
        router.flush()
        return out

    def _token_framer(self) -> _TokenFramer | _TextFramer:
        encoding = self._encoding
        if encoding is None:
            try:
                encoding = load_encoding()
            except Exception as exc:  # no vocabulary: the text still carries the markers
                logger.warning("gpt-oss: cannot load the Harmony encoding (%s); parsing text instead of token ids", exc)
                return _TextFramer(self._router)
        return _TokenFramer(encoding, self._router)

    @property
    def reasoning_tokens(self) -> int | None:
        framer = self._framer
        return framer.reasoning_tokens if isinstance(framer, _TokenFramer) else None

    @property
    def dropped(self) -> list[DroppedCall]:
        return self._router.dropped

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


# ---- rendering (the inverse of parsing) ------------------------------------------------------


def render_reply(parts: Iterable[Sequence[str]], header: str = "template") -> str:
    """Harmony completion text (what follows the prompt's ``<|start|>assistant``).

    ``parts``: ``("analysis", text)``, ``("commentary", text)``, ``("final", text)`` or
    ``("call", name, arguments_json)``.  ``header="template"`` writes calls as the official
    gpt-oss chat template does (``to=functions.NAME<|channel|>commentary json``);
    ``"model"`` as the model usually generates them
    (``<|channel|>commentary to=functions.NAME <|constrain|>json``).  A final message ends
    with ``<|return|>``, a call with ``<|call|>``, anything else with ``<|end|>``."""
    if header not in ("template", "model"):
        raise ValueError(f"header must be 'template' or 'model', got {header!r}")
    out: list[str] = []
    for i, part in enumerate(parts):
        role = START + "assistant" if i else ""  # the prompt already opened the first message
        kind = part[0]
        if kind == "call":
            _, name, args = part
            if header == "template":
                out.append(f"{role} to=functions.{name}{CHANNEL}commentary json{MESSAGE}{args}{CALL}")
            else:
                out.append(f"{role}{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{args}{CALL}")
        elif kind in ("analysis", "commentary", "final"):
            stop = RETURN if kind == "final" else END
            out.append(f"{role}{CHANNEL}{kind}{MESSAGE}{part[1]}{stop}")
        else:
            raise ValueError(f"unknown Harmony part {kind!r}; expected analysis, commentary, final or call")
    return "".join(out)
