"""Llama 3.1 / 3.2: bare JSON or ``<|python_tag|>`` calls."""

from __future__ import annotations

from ..tools.dialects.llama3 import Llama3JsonToolParser
from ._shared import LLAMA3
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "llama3", "Llama 3.1/3.2: bare JSON or <|python_tag|> calls",
    tool=Parser("llama3", Llama3JsonToolParser),
    tokenizer="llama-3.2", template="meta-llama-Llama-3.2-3B-Instruct.jinja",
    templates=("meta-llama-Llama-3.1-8B-Instruct.jinja",), end_of_turn=LLAMA3,
    peers=Peers(vllm=("llama3_json",), sglang=("llama3",)),
)
