"""QwQ: ``<think>`` reasoning, ``<tool_call>`` JSON envelopes."""

from __future__ import annotations

from ._shared import CHATML, THINK
from .qwen2_5 import QWEN
from ._spec import Family, Peers

FAMILY = Family(
    "qwq", "QwQ: <think> reasoning, <tool_call> JSON envelopes",
    tool=QWEN, reasoning=THINK, reasoning_names=("qwen-qwq",),
    tokenizer="qwen2.5", template="Qwen-QwQ-32B.jinja", end_of_turn=CHATML,
    peers=Peers(vllm=("hermes",), sglang=("qwen25",), lmdeploy=("qwen",)),
)
