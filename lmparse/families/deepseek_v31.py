"""DeepSeek-V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>JSON``."""

from __future__ import annotations

from ..tools.dialects.deepseek_v31 import DeepSeekV31ToolParser
from ._shared import DEEPSEEK
from .deepseek_v3 import DEEPSEEK_V3_REASONING
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "deepseek-v31", "DeepSeek-V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>JSON",
    tool=Parser("deepseek-v31", DeepSeekV31ToolParser), reasoning=DEEPSEEK_V3_REASONING,
    tokenizer="deepseek-v3.1", template="deepseek-ai-DeepSeek-V3.1.jinja", end_of_turn=DEEPSEEK,
    peers=Peers(vllm=("deepseek_v31",), sglang=("deepseekv31",)),
)
