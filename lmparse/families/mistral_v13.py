"""Mistral tokenizer v13 (Ministral 3 Reasoning): ``[THINK]`` reasoning, ``[TOOL_CALLS]NAME[ARGS]{...}`` only."""

from __future__ import annotations

from ..tools.dialects.mistral import MistralV13ToolParser
from ._spec import Family, Parser, Peers
from .mistral import MISTRAL_REASONING

# v13 drops the ``[CALL_ID]`` head and writes ``[THINK]`` as control tokens; the template asks
# for reasoning in its system prompt and prefills nothing, so a reply starts plain.
FAMILY = Family(
    "mistral-v13", "Mistral tokenizer v13: [THINK] reasoning, [TOOL_CALLS]NAME[ARGS]{...} (no [CALL_ID])",
    tool=Parser("mistral-v13", MistralV13ToolParser), reasoning=MISTRAL_REASONING, reasoning_names=("mistral-v13",),
    template="mistralai-Ministral-3-14B-Reasoning-2512.jinja",
    end_of_turn=("</s>",),
    peers=Peers(vllm=("mistral",), sglang=("mistral",), smg=("mistral_v13",)),
    verified="template only: no v13 tekken vocabulary here ([THINK], [ARGS] as control tokens unmeasured)",
)
