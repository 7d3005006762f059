"""DeepSeek-R1: ``<think>`` reasoning, V3's ``<｜tool▁calls▁begin｜>`` fenced JSON."""

from __future__ import annotations

from ._shared import DEEPSEEK, THINK
from .deepseek_v3 import DEEPSEEK_V3
from ._spec import Family, Peers

FAMILY = Family(
    "deepseek-r1", "DeepSeek-R1: <think> reasoning, <｜tool▁calls▁begin｜> fenced JSON",
    tool=DEEPSEEK_V3, tool_names=("deepseek-r1",), reasoning=THINK, reasoning_names=("deepseek-r1",),
    tokenizer="deepseek-r1", end_of_turn=DEEPSEEK,
    templates=("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"),
    peers=Peers(vllm=("deepseek_v3", "deepseek_r1"), sglang=("deepseekv3", "deepseek-r1")),
)
