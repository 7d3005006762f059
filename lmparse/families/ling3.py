"""Ling 3.0: ``<think>`` reasoning (the prompt decides), GLM-4.7 ``<arg_key>`` calls with newlines."""

from __future__ import annotations

from ..tools.dialects.glm47 import Ling3ToolParser
from .qwen3_5 import PROMPT_DECIDES
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "ling3", "Ling 3.0: <think> reasoning (prompt decides), GLM-4.7 <arg_key> calls with newlines",
    tool=Parser("ling3", Ling3ToolParser), reasoning=PROMPT_DECIDES, reasoning_names=("ling3",),
    template="inclusionai-ling-3.0-flash.jinja",
    peers=Peers(vllm=("glm47", "ling3"), sglang=("glm47", "ling3"), llamacpp=("parsers/ling3",)),
    verified="template only; GLM's vocabulary stands in for chunkings",
)
