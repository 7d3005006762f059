"""Qwen3.5 / 3.6: ``<think>`` reasoning whose start the prompt decides, Qwen3-Coder XML calls."""

from __future__ import annotations

from ..reasoning import PromptDecidesReasoningParser
from ._shared import CHATML
from .qwen3coder import QWEN3CODER
from ._spec import Family, Parser, Peers

# The templates prefill ``<think>\n`` (thinking) or an empty block: given the prompt, its tail
# settles the start (several 2026 families share this rule and name it after Qwen3.5).
PROMPT_DECIDES = Parser("qwen3.5", PromptDecidesReasoningParser)

# Qwen3.5's own vocabulary is not in the test data: Qwen3's stands in (its tags are single tokens too).
FAMILY = Family(
    "qwen3.5", "Qwen3.5/3.6: <think> reasoning (prompt decides), Qwen3-Coder XML calls",
    tool=QWEN3CODER, tool_names=("qwen3.5",), reasoning=PROMPT_DECIDES,
    tokenizer="qwen3", template="Qwen3.5-4B.jinja", end_of_turn=CHATML,
    peers=Peers(vllm=("qwen3_coder",), sglang=("qwen3_coder",)),
)
