"""Intern-S1: ``<think>`` reasoning, InternLM's ``<|action_start|><|plugin|>`` JSON."""

from __future__ import annotations

from ._shared import CHATML, THINK
from .internlm import INTERNLM
from ._spec import Family, Peers

FAMILY = Family(
    "intern-s1", "Intern-S1: <think> reasoning, <|action_start|><|plugin|> JSON",
    tool=INTERNLM, tool_names=("intern-s1",), reasoning=THINK, reasoning_names=("intern-s1",), end_of_turn=CHATML,
    peers=Peers(lmdeploy=("intern-s1", "intern-s1")),
    verified="no Intern-S1 tokenizer or template in the test data",
)
