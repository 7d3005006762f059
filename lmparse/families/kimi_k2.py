"""Kimi-K2 / K2.5: ``<|tool_calls_section_begin|>`` sections with ``functions.NAME:IDX`` ids."""

from __future__ import annotations

from ..tools.dialects.kimi_k2 import KimiK2ToolParser
from ._shared import CHATML, THINK
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "kimi-k2", "Kimi-K2: <|tool_calls_section_begin|> sections (no public vocabulary: pseudo-tokens)",
    tool=Parser("kimi-k2", KimiK2ToolParser), tool_names=("kimi-k2", "kimi_k2"),
    reasoning=THINK, reasoning_names=("kimi-k2",),
    template="Kimi-K2-Thinking.jinja", templates=("Kimi-K2-Instruct.jinja", "moonshotai-Kimi-K2.jinja"),
    end_of_turn=CHATML,
    peers=Peers(vllm=("kimi_k2",), sglang=("kimi_k2",), lmdeploy=("kimi_k2",)),
    verified="no public Kimi vocabulary: the markers are pseudo-tokens",
)
