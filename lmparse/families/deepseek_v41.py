"""DeepSeek-V4.1: V4's DSML with spaced tags (``<｜DSML｜ calls>``)."""

from __future__ import annotations

from ..tools.dialects.dsml import DeepSeekV41ToolParser
from .deepseek_v4 import DEEPSEEK_V4_REASONING
from ._spec import Family, Parser, Peers

# No V4.1 template or tokenizer is published: V4's vocabulary stands in (assumed shared).
FAMILY = Family(
    "deepseek-v41", "DeepSeek-V4.1: DSML with spaced tags <｜DSML｜ calls>",
    tool=Parser("deepseek-v41", DeepSeekV41ToolParser), reasoning=DEEPSEEK_V4_REASONING,
    reasoning_names=("deepseek-v41",), tokenizer="deepseek-v4",
    peers=Peers(vllm=("deepseek_v41",), sglang=("deepseekv41",)),
    verified="no V4.1 template or tokenizer: V4's vocabulary stands in (PROTOCOLS.md)",
)
