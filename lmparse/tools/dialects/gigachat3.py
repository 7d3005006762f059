"""GigaChat 3 / 3.1: one JSON call in a ``function call`` role turn (3) or after ``<|function_call|>`` (3.1).

Wire syntax (``GigaChat3-10B-A1.8B.jinja`` and ``GigaChat3.1-10B-A1.8B.jinja``, rendered)::

    Let me check.<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": "f", "arguments": {…}}<|message_sep|>
    Let me check.<|function_call|>{"name": "f", "arguments": {…}}<|message_sep|>

Built on ``JsonToolParser`` (the ``{"name": ..., "arguments": ...}`` envelope, arguments
forwarded verbatim as they arrive); ``<|message_sep|>`` ends the block.  In 3.0 the
content's own ``<|message_sep|>\\n\\n`` before the call turn is the call's syntax (the
template writes it only to open that turn); a reply that is only the call turn opens at
``function call<|role_sep|>``.  Both templates write one call per turn (``tool_calls[0]``);
several calls are read as blocks in a row.  No call ids.  3.5's DSML clone (``<｜GCML｜``)
is not covered (PROTOCOLS.md: SGLang only, unverified).

Tokens (unverified: no GigaChat vocabulary is here; vLLM keeps special tokens for it):
``<|role_sep|>``, ``<|message_sep|>``, ``<|function_call|>`` are single special tokens.
"""

from __future__ import annotations

from typing import Final

from ..json_envelope import JsonToolParser
from ..._mypyc import mypyc_attr

MESSAGE_SEP: Final = "<|message_sep|>"
ROLE_TURN: Final = "function call<|role_sep|>"
FUNCTION_CALL: Final = "<|function_call|>"


@mypyc_attr(allow_interpreted_subclasses=True)
class GigaChat3ToolParser(JsonToolParser):
    summary = 'function call<|role_sep|>\\n{"name": NAME, "arguments": {...}} or <|function_call|>{...}<|message_sep|>'
    # 3.0 writes the role name, 3.1 the marker: the separators are what both templates share.
    template_markers = ("<|role_sep|>", MESSAGE_SEP, '{"name": ')
    tool_open_tags = (f"{MESSAGE_SEP}\n\n{ROLE_TURN}", ROLE_TURN, FUNCTION_CALL)
    tool_close_tag = MESSAGE_SEP
    tool_close_prefixes = ()
    # Both templates write ``<|message_sep|>\n\n`` to end a turn: the blank line after a call's
    # ``<|message_sep|>`` is the call's, the whitespace before 3.1's ``<|function_call|>`` is text.
    block_lead = ""
    block_separator = "\n\n"
    # A ``<|message_sep|>`` that opens no call turn ends the model's message (a single special
    # token, never prose): framing, dropped from the content, not text held at the end.
    framing_markers = (MESSAGE_SEP,)

    # 3.1's layout, the current one; calls in a row are separate turns' worth of blocks.
    render_template = FUNCTION_CALL + "{body}{close}"

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "\n\n".join(cls.render_call(name, args) for name, args in calls)
