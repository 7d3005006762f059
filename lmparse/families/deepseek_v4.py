"""DeepSeek-V4: DSML ``<｜DSML｜tool_calls>``; the prompt's prefill decides thinking."""

from __future__ import annotations

from ..reasoning import OptInThinking
from ..tools.dialects.dsml import DeepSeekV4ToolParser
from ._shared import DEEPSEEK
from ._spec import Family, Parser, Peers

class DeepSeekV4ReasoningParser(OptInThinking):
    """The V4 templates prefill ``<think>`` (thinking) or ``</think>`` (chat) and default to
    chat, where vLLM assumes thinking: given the prompt, its tail settles it."""

    initial_mode = "auto"


DEEPSEEK_V4_REASONING = Parser("deepseek-v4", DeepSeekV4ReasoningParser)

FAMILY = Family(
    "deepseek-v4", "DeepSeek-V4: DSML <｜DSML｜tool_calls>",
    tool=Parser("deepseek-v4", DeepSeekV4ToolParser), reasoning=DEEPSEEK_V4_REASONING,
    tokenizer="deepseek-v4", template="deepseek-ai-DeepSeek-V4.jinja",
    templates=("deepseek-ai-DeepSeek-V4-Flash-0731.jinja",), end_of_turn=DEEPSEEK,
    peers=Peers(vllm=("deepseek_v4",)),
)
