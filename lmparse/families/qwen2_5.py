"""Qwen2.5: ``<tool_call>`` JSON envelopes; home of the ``qwen`` dialect (Hermes-style JSON)."""

from __future__ import annotations

from ..tools.dialects.qwen import QwenToolParser
from ._shared import CHATML
from ._spec import Family, Parser, Peers

# Qwen2.5 / Qwen3 / QwQ / Hermes / Granite 4 write these envelopes byte for byte.
QWEN = Parser("qwen", QwenToolParser)

FAMILY = Family(
    "qwen2.5", "Qwen2.5: <tool_call> JSON envelopes",
    tool=QWEN, tool_names=("qwen2d5",),
    tokenizer="qwen2.5", template="Qwen-Qwen2.5-7B-Instruct.jinja", end_of_turn=CHATML,
    peers=Peers(vllm=("hermes",), sglang=("qwen25",), lmdeploy=("qwen",)),
)
