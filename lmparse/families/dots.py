"""dots / dots3 (``dots-studio``): ``<think>`` reasoning (the model opens it), MiniMax-M2's
``<invoke>`` XML under ``<dots_function_call>`` with values between newlines."""

from __future__ import annotations

from ..tools.dialects.minimax_m2 import DotsToolParser
from .lfm2 import LFM2_REASONING
from ._spec import Family, Parser, Peers

# Reasoning: ``<think>\n…\n</think>\n\n``, nothing prefilled (the thinking-on rendering of a
# plain answer has no block), so a reply starts plain and the model opens it: LFM2's rule.
FAMILY = Family(
    "dots", "dots/dots3: <think> reasoning (model opens), <dots_function_call><invoke name=..> XML, one per block",
    tool=Parser("dots", DotsToolParser), tool_names=("dots", "dots3"),
    reasoning=LFM2_REASONING, reasoning_names=("dots",),
    peers=Peers(vllm=("dots",), smg=("dots3",)),
    verified="no dots template or vocabulary here: bellwether's dots3 rendering and token pieces and vLLM's "
             "dots parser and tests (PROTOCOLS.md)",
)
