"""Nemotron 3 Nano: ``<think>`` reasoning (the prompt decides), Qwen3-Coder XML calls."""

from __future__ import annotations

from .qwen3_5 import PROMPT_DECIDES
from .qwen3coder import QWEN3CODER
from ._spec import Family, Peers

# ``nemotron3`` as a reasoning name is also Dynamo's (mapped there to ``nemotron_deci``).
FAMILY = Family(
    "nemotron3", "Nemotron 3 Nano: <think> reasoning (prompt decides), Qwen3-Coder XML calls",
    tool=QWEN3CODER, tool_names=("nemotron3",), reasoning=PROMPT_DECIDES, reasoning_names=("nemotron3",),
    tokenizer="qwen3", template="NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
    peers=Peers(vllm=("qwen3_coder", "nemotron_v3")),
    verified="the Qwen3 vocabulary stands in for Nemotron's",
)
