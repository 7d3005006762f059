"""ByteDance Seed-OSS: ``<seed:think>`` reasoning, Qwen3-Coder XML inside ``<seed:tool_call>``."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.seed_oss import SeedOssToolParser
from ._spec import Family, Parser, Peers

class SeedOssReasoningParser(ModelOpensReasoning):
    """``<seed:think>`` ... ``</seed:think>``: the model opens reasoning itself (the
    template's generation prompt does not), so a reply starts plain."""

    start_tag = "<seed:think>"
    end_tag = "</seed:think>"


FAMILY = Family(
    "seed-oss", "Seed-OSS: <seed:think> reasoning, <seed:tool_call> Qwen3-Coder XML",
    tool=Parser("seed-oss", SeedOssToolParser), reasoning=Parser("seed-oss", SeedOssReasoningParser),
    end_of_turn=("<seed:eos>",),
    peers=Peers(vllm=("seed_oss",), sglang=("seed_oss",)),
    verified="no Seed-OSS tokenizer or template in the test data: PROTOCOLS.md's layout",
)
