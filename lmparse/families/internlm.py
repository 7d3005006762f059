"""InternLM2 / 2.5: ``<|action_start|><|plugin|>`` JSON."""

from __future__ import annotations

from ..tools.dialects.internlm import InternLMToolParser
from ._spec import Family, Parser, Peers

INTERNLM = Parser("internlm", InternLMToolParser)

FAMILY = Family(
    "internlm", "InternLM2/2.5: <|action_start|><|plugin|> JSON",
    tool=INTERNLM, tokenizer="internlm2", end_of_turn=("<|im_end|>", "</s>"),
    peers=Peers(vllm=("internlm",), lmdeploy=("internlm",)),
)
