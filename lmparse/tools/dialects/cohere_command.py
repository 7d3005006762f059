"""Cohere Command A / R7B ("cmd3") and North / Cohere2MoE ("cmd4"): ``<|START_ACTION|>[json]<|END_ACTION|>``.

Wire syntax (``Cohere2MoE.jinja`` and ``CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja``,
rendered; the JSON whitespace is free)::

    <|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},
        {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Rome"}}
    ]<|END_ACTION|>

Built on ``JsonToolParser`` (its JSON-array-of-envelopes path, with ``tool_name`` as the
name key and ``parameters`` as the arguments): arguments are forwarded verbatim as they
arrive.  ``tool_call_id`` is the model's decimal counter across the conversation (the
template renumbers calls, so "0" recurs from turn to turn): it is passed over, and each
call gets a fresh id, as SGLang does.

Content comes wrapped: cmd3 ``<|START_RESPONSE|>…<|END_RESPONSE|>``, cmd4
``<|START_TEXT|>…<|END_TEXT|>`` (vLLM ``parser/cohere_command.py`` accepts both for every
Cohere model).  The wrappers are the family's framing (``framing_markers``): the router drops
them from the content, and the ``cohere-command`` reasoning parser names them too, so a
request without tools (no tool parser at work) is unwrapped alike.

Tokens (unverified: no Command A / Cohere2MoE vocabulary is published; vLLM looks every
marker up as one token and keeps special tokens): every ``<|…|>`` marker is one special
token, so no proper prefix of one ends a chunk.
"""

from __future__ import annotations

from typing import Final

import json

from ..json_envelope import JsonToolParser
from ..syntax import CallSyntax
from ..._mypyc import mypyc_attr

START_ACTION: Final = "<|START_ACTION|>"
END_ACTION: Final = "<|END_ACTION|>"
# Content wrappers of cmd3 and cmd4.
WRAPPERS: Final = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")


@mypyc_attr(allow_interpreted_subclasses=True)
class CohereCommandToolParser(JsonToolParser):
    summary = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": NAME, "parameters": {...}}, …]<|END_ACTION|>'
    # Both templates write these literally; the wrappers differ between cmd3 and cmd4.
    template_markers = (START_ACTION, END_ACTION, '"tool_name"')
    tool_open_tags = (START_ACTION,)
    framing_markers = WRAPPERS
    tool_close_tag = END_ACTION
    tool_close_prefixes = ()
    name_field = "tool_name"
    argument_field = "parameters"

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """None (``tool_choice="required"`` is refused): each element writes the model's
        counter before the name, and ``CallSyntax`` has an index slot only after it;
        forcing one fixed id, or another key order, would take the model off its template."""
        return None

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        rows = [
            f'    {{"tool_call_id": "{i}", "tool_name": {json.dumps(name, ensure_ascii=False)}, "parameters": {args}}}'
            for i, (name, args) in enumerate(calls)
        ]
        return f"{START_ACTION}[\n" + ",\n".join(rows) + f"\n]{END_ACTION}"
