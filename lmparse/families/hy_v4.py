"""Tencent HY-V4: Hy3's dialect (no ``<tool_sep>``), thinking ``high`` unless the request says otherwise."""

from __future__ import annotations

from .hunyuan import HUNYUAN, HunyuanReasoningParser
from ._spec import Family, Parser, Peers

class HyV4ReasoningParser(HunyuanReasoningParser):
    """HY-V4: as Hy3, but vLLM's ``hy_v4`` (and SGLang) assume ``high`` when no effort is given."""

    default_effort = "high"


FAMILY = Family(
    "hy-v4", "Tencent HY-V4: <think:S> reasoning (high effort by default), <tool_calls:S> pairs without <tool_sep>",
    tool=HUNYUAN, tool_names=("hy-v4",), reasoning=Parser("hy-v4", HyV4ReasoningParser),
    peers=Peers(vllm=("hy_v4", "hy_v4"), sglang=("hunyuan", "hunyuan")),
    verified="no HY-V4 template or vocabulary: vLLM's structural tag and hy_v4 parser (PROTOCOLS.md)",
)
