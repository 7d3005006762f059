"""Step-5: Qwen3-Coder XML calls with the content's whitespace kept, ``<think>`` reasoning."""

from __future__ import annotations

from ..tools.dialects.qwen3coder import Step5ToolParser
from ._shared import THINK
from ._spec import Family, Parser, Peers

# vLLM's ``step5`` reasoning parser is its DeepSeek-R1 one: ``<think>`` optional, reasoning until ``</think>``.
FAMILY = Family(
    "step5", "Step-5: <think> reasoning, Qwen3-Coder XML calls, whitespace around them kept",
    tool=Parser("step5", Step5ToolParser), reasoning=THINK, reasoning_names=("step5",),
    peers=Peers(vllm=("step5", "step5")),
    verified="PROTOCOLS.md only (vLLM's parser): no Step-5 template or tokenizer; Qwen3's vocabulary stands in",
)
