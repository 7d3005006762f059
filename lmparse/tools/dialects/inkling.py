"""Inkling (Thinking Machines, "TML"): a turn is a sequence of typed blocks.

Each block is ``<|message_model|>[HEADER]<|content_KIND|>BODY<|end_message|>`` (PROTOCOLS.md,
``inkling``); the prompt ends with ``<|message_model|>``, so a reply starts at a header or a
kind marker.  A tool call's HEADER is the function name and its body compact JSON with ``args``
(``arguments`` and ``parameters`` are read too)::

    <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>

The tool block opens at ``<|message_model|>``; a block of another kind (text, thinking, an error)
holds no call: the opener is framing, and the block ends before its kind marker, which the
router reads (the reasoning parser's tags and the framing markers below).  At the reply's very
start the header has no opener: a bare start at a name character, which is a call only if
``<|content_invoke_tool_json|>`` follows the name.  The header names the call (it wins over
the body's ``name``); the body's arguments are forwarded as written.

The header is optional (vLLM's tests write none): ``<|content_invoke_tool_json|>`` met with no
header before it -- at the reply's start, or after a block closed without ``<|message_model|>``
-- opens the block itself (a payload open tag), and the body's ``name`` names the call.  That
is unambiguous: the kind marker is a special token, and the body must still be an envelope
with a name, else the text goes back (``See <|content_invoke_tool_json|> here`` is content).

Tokens (bw ``inkling``, and vLLM's test vocabulary): every marker is one special token; the
parser matches text, so a split anywhere is held.
"""

from __future__ import annotations

from typing import Final

import json
import re
import string

from ..base import MORE, PAYLOAD_CLOSED, Events, Payload, PayloadStep
from ..json_envelope import JsonToolParser
from ._syntax import at_partial, skip_ws
from ..._mypyc import mypyc_attr

MESSAGE: Final = "<|message_model|>"
END_MESSAGE: Final = "<|end_message|>"
INVOKE_JSON: Final = "<|content_invoke_tool_json|>"
TEXT: Final = "<|content_text|>"
THINKING: Final = "<|content_thinking|>"
INVOKE_TEXT: Final = "<|content_invoke_tool_text|>"
TOOL_ERROR: Final = "<|content_tool_error|>"
END_SAMPLING: Final = "<|content_model_end_sampling|>"
# Kind markers of blocks that hold no call, and the turn's end: framing, dropped from the text.
FRAMING: Final = (TEXT, INVOKE_TEXT, TOOL_ERROR, END_SAMPLING)
# What may follow the opener of a block that holds no call (its kind marker; an empty block).
_OTHER_KINDS: Final = (THINKING, *FRAMING, MESSAGE, END_MESSAGE)
_MAX_NAME: Final = 256  # a longer header is not a function name
_HEADER_END: Final = re.compile(r"[\s<]")

_HEADER: Final = 0
_BODY: Final = 1
_TRAILER: Final = 2


@mypyc_attr(allow_interpreted_subclasses=True)
class InklingToolParser(JsonToolParser):
    summary = f'{MESSAGE}NAME{INVOKE_JSON}{{"name":NAME,"args":{{...}}}}{END_MESSAGE}'
    tool_open_tags = (MESSAGE,)
    # A headerless tool block: the kind marker opens it and is read as its (empty) header's end.
    payload_open_tags = (INVOKE_JSON,)
    tool_close_tag = None  # the dialect reads ``<|end_message|>`` itself: other blocks are not its own
    argument_field = "args"
    argument_aliases = frozenset(("arguments", "parameters"))
    envelope_keys = frozenset(("name", "args", "arguments", "parameters"))
    # With tools on, the close of a text block is framing too (without, block markup stays text).
    framing_markers = (*FRAMING, END_MESSAGE)
    bare_start = True
    bare_start_chars = string.ascii_letters + string.digits + "_"
    template_markers = (INVOKE_JSON,)
    # The template writes blocks back to back.
    block_lead = ""
    block_separator = ""

    @classmethod
    def call_syntax(cls) -> None:
        """Not described: a call writes its name twice (header and body), which the derived
        call syntax cannot say, and XGrammar has no TML style (PROTOCOLS.md)."""
        return None

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._part = _HEADER
        self._header = ""

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos = 0
        if self._part == _HEADER:
            pos, header_status = self._read_header(text, events, final)
            if header_status is not None:
                return pos, header_status
        if self._part == _BODY:
            used, status = super()._consume_stream_payload(text[pos:] if pos else text, events, final=final)
            pos += used
            if status is not PAYLOAD_CLOSED or not self._envelopes:
                return pos, status
            self._part = _TRAILER
        # After the call's JSON: its ``<|end_message|>`` (anything else is not this block's).
        start, pos = pos, skip_ws(text, pos)
        if text.startswith(END_MESSAGE, pos):
            return pos + len(END_MESSAGE), PAYLOAD_CLOSED
        if pos == len(text) or at_partial(text, pos, END_MESSAGE):
            return (len(text), PAYLOAD_CLOSED) if final else (start, MORE)
        return start, PAYLOAD_CLOSED

    def _read_header(self, text: str, events: Events, final: bool) -> PayloadStep | tuple[int, None]:
        """The block's header up to its kind marker: ``(position of the body, None)`` for a
        JSON tool call, else what the payload decided."""
        stop = _HEADER_END.search(text, 0, _MAX_NAME)
        at = stop.start() if stop is not None else len(text)
        if stop is not None and text.startswith(INVOKE_JSON, at):
            self._header = text[:at]
            self._part = _BODY
            return at + len(INVOKE_JSON), None
        if stop is None and len(text) < _MAX_NAME or stop is not None and at_partial(text, at, INVOKE_JSON):
            # A name or the kind marker still arriving (cut off by the end: a call cut off).
            return (0, self._reject(events)) if final and self.bare else (0, MORE)
        if not self.bare and at == 0:
            if text.startswith(_OTHER_KINDS):
                # Another kind of block: the opener was its framing; the kind marker is the router's.
                self._commit()
                return 0, PAYLOAD_CLOSED
            if not final and at_partial(text, 0, *_OTHER_KINDS):
                return 0, MORE
        # Prose (``See the <|message_model|> tag``): not a block; the text goes back.
        return 0, self._reject(events)

    def _finish_name(self, events: Events) -> None:
        if self._header:  # the header names the call
            self._parts = []
            self._emit_name(events, self._header)
        else:
            super()._finish_name(events)

    def _end_envelope(self, events: Events) -> Payload | None:
        if self._header and not self._calls.named:
            self._emit_name(events, self._header)
        return super()._end_envelope(events)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """One block per call, the body compact as the template writes it (the arguments as given)."""
        return "".join(
            f'{MESSAGE}{name}{INVOKE_JSON}{{"name":{json.dumps(name, ensure_ascii=False)},"args":{arguments}}}'
            f"{END_MESSAGE}" for name, arguments in calls)
