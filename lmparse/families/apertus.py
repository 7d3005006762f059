"""Apertus: ``<|inner_prefix|>`` reasoning, ``<|tools_prefix|>[{"NAME": {..}}]`` calls."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.apertus import ApertusToolParser
from ._spec import Family, Parser, Peers

class ApertusReasoningParser(ModelOpensReasoning):
    """``<|inner_prefix|>`` ... ``<|inner_suffix|>``: the generation prompt is only
    ``<|assistant_start|>`` whatever ``enable_thinking`` says (the switch only writes
    ``Deliberation: enabled`` into the developer turn), so a reply starts plain and the
    model opens reasoning itself.  Calls inside it are calls (the router looks there too)."""

    start_tag = "<|inner_prefix|>"
    end_tag = "<|inner_suffix|>"


FAMILY = Family(
    "apertus", 'Apertus: <|inner_prefix|> reasoning, <|tools_prefix|>[{"NAME": {..}}] calls',
    tool=Parser("apertus", ApertusToolParser), reasoning=Parser("apertus", ApertusReasoningParser),
    template="Apertus-8B-Instruct.jinja",
    peers=Peers(vllm=("apertus",), sglang=("apertus2509",)),
    verified="template only: no Apertus vocabulary (pseudo-tokens)",
)
