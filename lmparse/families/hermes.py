"""Hermes 3: the ``qwen`` dialect's ``<tool_call>`` JSON envelopes on a Llama 3 vocabulary."""

from __future__ import annotations

from ._shared import CHATML, LLAMA3
from .qwen2_5 import QWEN
from ._spec import Family, Peers

FAMILY = Family(
    "hermes", "Hermes 3: <tool_call> JSON envelopes",
    tool=QWEN, tool_names=("hermes",),
    tokenizer="llama-3.2", template="NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
    end_of_turn=(CHATML[0], *LLAMA3),
    peers=Peers(vllm=("hermes",), sglang=("qwen25",), lmdeploy=("qwen",)),
)
