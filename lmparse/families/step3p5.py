"""Step-3.5-Flash: always ``<think>``, Qwen3-Coder XML calls written back to back."""

from __future__ import annotations

from ..reasoning import AlwaysReasoning
from ..tools.dialects.qwen3coder import Step3p5ToolParser
from ._spec import Family, Parser, Peers

class Step3p5ReasoningParser(AlwaysReasoning):
    """Step-3.5's template always prefills ``<think>\\n`` and has no switch: the reply starts
    in reasoning whatever ``enable_thinking`` says (as vLLM's ``step3p5`` parser)."""


FAMILY = Family(
    "step3p5", "Step-3.5-Flash: always <think>, Qwen3-Coder XML calls back to back",
    tool=Parser("step3p5", Step3p5ToolParser), reasoning=Parser("step3p5", Step3p5ReasoningParser),
    tokenizer="qwen3", template="StepFun3.5-Flash.jinja",
    peers=Peers(vllm=("qwen3_coder", "step3p5")),
    verified="the Qwen3 vocabulary stands in for Step's",
)
