"""Granite 4.0 / 4.1: the ``qwen`` dialect byte for byte (their templates, rendered); no reasoning markers."""

from __future__ import annotations

from .qwen2_5 import QWEN
from ._spec import Family, Peers

FAMILY = Family(
    "granite4", "Granite 4.0/4.1: <tool_call> JSON envelopes, no reasoning markers",
    tool=QWEN, tool_names=("granite4",),
    template="ibm-granite-granite-4.0.jinja", templates=("ibm-granite-granite-4.1.jinja",),
    peers=Peers(vllm=("granite4",)),
    verified="templates only: no Granite vocabulary in the test data (pseudo-tokens)",
)
