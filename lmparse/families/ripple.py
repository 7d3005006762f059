"""Ricursive Ripple: Hermes/``qwen`` JSON envelopes, ``<think>`` the model opens per turn."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from .qwen2_5 import QWEN
from ._spec import Family, Parser, Peers


class RippleReasoningParser(ModelOpensReasoning):
    """The model decides per turn whether to think: the prompt opens nothing and the template
    has no switch, so a reply starts plain; ``<think>`` opens reasoning and a ``<tool_call>``
    inside it ends it (vLLM's ``ripple``)."""

    tool_call_ends_reasoning = True


FAMILY = Family(
    "ripple", "Ricursive Ripple: optional per-turn <think>, <tool_call> JSON envelopes",
    tool=QWEN, tool_names=("ripple",), reasoning=Parser("ripple", RippleReasoningParser),
    peers=Peers(vllm=("ripple", "ripple")),
    verified="PROTOCOLS.md only (vLLM's parser): no Ripple template or tokenizer; Qwen2.5's vocabulary stands in",
)
