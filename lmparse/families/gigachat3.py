"""GigaChat 3 / 3.1: ``<|function_call|>`` or a ``function call`` turn, JSON; no reasoning."""

from __future__ import annotations

from ..tools.dialects.gigachat3 import MESSAGE_SEP, GigaChat3ToolParser
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "gigachat3", "GigaChat 3/3.1: <|function_call|> or a 'function call' turn, JSON; no reasoning",
    tool=Parser("gigachat3", GigaChat3ToolParser),
    template="GigaChat3.1-10B-A1.8B.jinja", templates=("GigaChat3-10B-A1.8B.jinja",), end_of_turn=(MESSAGE_SEP,),
    peers=Peers(vllm=("gigachat3",), sglang=("gigachat3",), llamacpp=("parsers/gigachat-v3",)),
    verified="templates only: no GigaChat vocabulary (pseudo-tokens)",
)
