"""Granite 4.2: Nemotron V3's (= Qwen3-Coder's) XML calls, ``<think>`` reasoning on by default."""

from __future__ import annotations

from ._shared import THINK
from .qwen3coder import QWEN3CODER
from ._spec import Family, Peers

# vLLM's ``granite_toolcall_parser`` is its Nemotron V3 parser; ``granite_thinking_parser`` reads
# ``<think>`` ... ``</think>`` with thinking on unless the request turns it off: the default rule.
FAMILY = Family(
    "granite4.2", "Granite 4.2: <think> reasoning, Qwen3-Coder XML calls",
    tool=QWEN3CODER, tool_names=("granite4.2",), reasoning=THINK, reasoning_names=("granite4.2",),
    peers=Peers(vllm=("granite_toolcall_parser", "granite_thinking_parser")),
    verified="PROTOCOLS.md only (vLLM's parsers): no Granite 4.2 template or tokenizer",
)
