"""DeepSeek-V3-0324: ``<｜tool▁calls▁begin｜>`` sections of fenced JSON; thinking only when asked."""

from __future__ import annotations

from ..reasoning import OptInThinking
from ..tools.dialects.deepseek_v3 import DeepSeekV3ToolParser
from ._shared import DEEPSEEK
from ._spec import Family, Parser, Peers

DEEPSEEK_V3 = Parser("deepseek-v3", DeepSeekV3ToolParser)


class DeepSeekV3ReasoningParser(OptInThinking):
    """``<think>``, only when the request turns thinking on (the V3 templates default to chat)."""


DEEPSEEK_V3_REASONING = Parser("deepseek-v3", DeepSeekV3ReasoningParser)

FAMILY = Family(
    "deepseek-v3", "DeepSeek-V3-0324: <｜tool▁calls▁begin｜> fenced JSON",
    tool=DEEPSEEK_V3, reasoning=DEEPSEEK_V3_REASONING,
    tokenizer="deepseek-r1", end_of_turn=DEEPSEEK,
    peers=Peers(vllm=("deepseek_v3",), sglang=("deepseekv3",)),
)
