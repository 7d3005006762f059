"""MiniCPM5: ``<think>`` reasoning (the prompt decides), ``<function name=..><param name=..>`` calls."""

from __future__ import annotations

from ..reasoning import OptInThinking
from ..tools.dialects.minicpm5 import MiniCPM5ToolParser
from ._spec import Family, Parser, Peers

class MiniCPM5ReasoningParser(OptInThinking):
    """``<think>`` ... ``</think>``.  The template prefills ``<think>\\n`` when ``enable_thinking``
    is true, ``<think>\\n\\n</think>\\n\\n`` when it is false, and nothing when it is not set
    (the model decides: plain until ``<think>``).  Given the prompt, its tail settles it."""

    initial_mode = "auto"


FAMILY = Family(
    "minicpm5", "MiniCPM5: <think> reasoning (prompt decides), <function name=..><param name=..> "
                "calls with CDATA strings (no public vocabulary: pseudo-tokens)",
    tool=Parser("minicpm5", MiniCPM5ToolParser), reasoning=Parser("minicpm5", MiniCPM5ReasoningParser),
    template="openbmb-MiniCPM5-1B.jinja",
    peers=Peers(vllm=("minicpm5",), sglang=("minicpm5",), llamacpp=("parsers/minicpm5",)),
    verified="template only: no MiniCPM5 vocabulary (pseudo-tokens)",
)
