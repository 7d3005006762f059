"""Llama 3.2 / 4 pythonic calls: ``[f(a=1), g()]``, optionally in ``<|python_start|>``."""

from __future__ import annotations

from ..tools.dialects.pythonic import PythonicToolParser
from ._shared import LLAMA3
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "pythonic", "Llama 3.2/4 pythonic: [f(a=1), g()]",
    tool=Parser("pythonic", PythonicToolParser), tool_names=("pythonic", "llama4-pythonic"),
    tokenizer="llama-3.2", end_of_turn=LLAMA3,
    peers=Peers(vllm=("pythonic", "llama4_pythonic"), sglang=("pythonic",)),
    verified="no pythonic template in the test data: the wire layout of PROTOCOLS.md",
)
