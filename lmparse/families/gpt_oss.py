"""gpt-oss: Harmony channels (analysis, commentary to=functions.X, final), one response parser."""

from __future__ import annotations

from ..response.harmony import HarmonyResponseParser
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "gpt-oss", "gpt-oss: Harmony channels (analysis, commentary to=functions.X, final)",
    response=Parser("gpt-oss", HarmonyResponseParser),
    tokenizer="gpt-oss", template="openai-gpt-oss-120b.jinja",
    peers=Peers(vllm=("openai", "openai_gptoss"), sglang=("gpt-oss", "gpt-oss"), lmdeploy=("gpt-oss",)),
)
