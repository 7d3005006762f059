"""DeepSeek-V3.2: DSML ``<｜DSML｜function_calls>``; thinking only when asked."""

from __future__ import annotations

from ..reasoning import OptInThinking
from ..tools.dialects.dsml import DeepSeekV32ToolParser
from ._shared import DEEPSEEK
from ._spec import Family, Parser, Peers

class DeepSeekV32ReasoningParser(OptInThinking):
    """``<think>``, only when ``thinking`` / ``enable_thinking`` is true."""


FAMILY = Family(
    "deepseek-v32", "DeepSeek-V3.2: DSML <｜DSML｜function_calls>",
    tool=Parser("deepseek-v32", DeepSeekV32ToolParser),
    reasoning=Parser("deepseek-v32", DeepSeekV32ReasoningParser), reasoning_names=("deepseek-v32", "deepseek-v3.2"),
    tokenizer="deepseek-v3.2", template="deepseek-ai-DeepSeek-V3.2.jinja", end_of_turn=DEEPSEEK,
    peers=Peers(vllm=("deepseek_v32",), sglang=("deepseekv32",), lmdeploy=("deepseek-v32",)),
)
