"""ZAYA1 (Zyphra): Qwen3-Coder's XML inside ``<zyphra_tool_call>`` ... ``</zyphra_tool_call>``::

    <zyphra_tool_call>\\n<function=NAME>\\n<parameter=K>V</parameter>\\n</function>\\n</zyphra_tool_call>

vLLM's ``zaya`` / ``zaya_xml`` are its Qwen3-Coder parser with these two wrapper strings, so a
bare ``<function=`` still opens a call.  Third-party notes say ZAYA1-8B writes a JSON envelope
``{"name": NAME, "arguments": {...}}`` inside the wrapper instead: a block whose body starts
with ``{`` is read by the ``qwen`` JSON envelope driver, on the same call emitter.

Tokenization (unverified, no ZAYA1 tokenizer here): third-party notes give the wrapper tags
ids 101-104, single tokens, so the close tag has no proper token prefix.  No template is
published: no whitespace around blocks is taken as the calls' own.
"""

from __future__ import annotations

from typing import Final

from collections.abc import Callable

from ...markers import skip_ws
from ...request import ParserRequest
from ..base import MORE, Events, Payload, PayloadStep, RunTake
from ..calls import new_call_id
from ..json_envelope import JsonToolParser
from .qwen3coder import Qwen3CoderToolParser
from ..._mypyc import mypyc_attr

OPEN: Final = "<zyphra_tool_call>"
CLOSE: Final = "</zyphra_tool_call>"
_XML: Final = "xml"
_JSON: Final = "json"


@mypyc_attr(allow_interpreted_subclasses=True)
class _JsonBody(JsonToolParser):
    """The JSON envelope form of a ZAYA1 block (a collaborator of ``ZayaToolParser``, never registered)."""

    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE


@mypyc_attr(allow_interpreted_subclasses=True)
class ZayaToolParser(Qwen3CoderToolParser):
    summary = "<zyphra_tool_call><function=NAME><parameter=K>V</parameter></function></zyphra_tool_call>, or JSON"
    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE
    tool_close_prefixes = ()
    spaced_tokens = ()  # no vocabulary here says its tags are single tokens
    # No ZAYA1 template to read the layout from.
    block_lead = ""
    block_separator = None
    _json: _JsonBody | None = None

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        super().__init__(request, id_factory)
        self._json = _JsonBody(request, id_factory, self._calls)

    def start_block(self, open_tag: str) -> None:
        super().start_block(open_tag)
        self._body: str | None = None  # undecided until the body's first character
        if self._json is not None:
            self._json.start_block(open_tag)

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        body = self._body
        if body is None:
            pos = skip_ws(text, 0)
            if pos == len(text) and not final:
                return 0, MORE
            body = self._body = _JSON if text.startswith("{", pos) and not self.bare else _XML
        if body is _XML:
            return super()._consume_stream_payload(text, events, final=final)
        return self._from_json(self._delegate()._consume_stream_payload(text, events, final=final))

    def _finish_payload(self, events: Events) -> Payload:
        if self._body is _JSON:
            return self._from_json((0, self._delegate()._finish_payload(events)))[1]
        return super()._finish_payload(events)

    def take_run(self, text: str) -> RunTake | None:
        return self._delegate().take_run(text) if self._body is _JSON else super().take_run(text)

    def _delegate(self) -> _JsonBody:
        assert self._json is not None
        return self._json

    def _from_json(self, step: PayloadStep) -> PayloadStep:
        """The JSON driver's step; what it committed is this block's."""
        if self._delegate().committed and not self.committed:
            self._commit()
        return step
