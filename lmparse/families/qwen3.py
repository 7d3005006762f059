"""Qwen3: ``<think>`` reasoning, ``<tool_call>`` JSON envelopes."""

from __future__ import annotations

from ._shared import CHATML, THINK
from .qwen2_5 import QWEN
from ._spec import Family, Peers

FAMILY = Family(
    "qwen3", "Qwen3: <think> reasoning, <tool_call> JSON envelopes",
    tool=QWEN, tool_names=("qwen3",), reasoning=THINK, reasoning_names=("qwen3",),
    tokenizer="qwen3", template="Qwen-Qwen3-0.6B.jinja", end_of_turn=CHATML,
    peers=Peers(vllm=("hermes", "qwen3"), sglang=("qwen25", "qwen3"), lmdeploy=("qwen", "default")),
)
