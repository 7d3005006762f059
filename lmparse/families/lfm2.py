"""LFM2 / LFM2.5: ``<think>`` reasoning (the model opens it), ``<|tool_call_start|>[f(a='x')]`` calls."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.lfm2 import Lfm2ToolParser
from ._spec import Family, Parser, Peers

class Lfm2ReasoningParser(ModelOpensReasoning):
    """``<think>`` ... ``</think>`` (LFM2.5-8B-A1B): no LFM2 template prefills anything,
    whatever ``enable_thinking`` says, so a reply starts plain and the model opens it."""


LFM2_REASONING = Parser("lfm2", Lfm2ReasoningParser)

# LFM2-8B-A1B and LFM2.5-Instruct write no calls (their templates hold no call markers).
FAMILY = Family(
    "lfm2", "LFM2/LFM2.5: <think> reasoning (model opens), <|tool_call_start|>[f(a='x')] calls",
    # ``lfm2.5``: SMG's Symphony name for the same format (PROTOCOLS.md).
    tool=Parser("lfm2", Lfm2ToolParser), reasoning=LFM2_REASONING,
    tool_names=("lfm2", "lfm2.5"), reasoning_names=("lfm2", "lfm2.5"),
    template="LFM2.5-8B-A1B.jinja",
    peers=Peers(vllm=("lfm2",), sglang=("lfm2",), smg=("lfm2.5",), llamacpp=("parsers/lfm2",)),
    verified="template only: no LFM2 vocabulary (pseudo-tokens)",
)
