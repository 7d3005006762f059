"""MiniMax-M2.x: ``</think>`` only, ``<minimax:tool_call><invoke name=..>`` XML."""

from __future__ import annotations

from ..reasoning import AlwaysReasoning
from ..tools.dialects.minimax_m2 import MiniMaxM2ToolParser
from ._spec import Family, Parser, Peers

class MiniMaxM2ReasoningParser(AlwaysReasoning):
    """The generation prompt ends in ``<think>\\n``, so the model writes only ``</think>``
    (a single token in the MiniMax-M2 vocabulary); there is no thinking switch."""

    start_tag = None


FAMILY = Family(
    "minimax-m2", "MiniMax-M2: </think> only, <minimax:tool_call><invoke name=..> XML",
    tool=Parser("minimax-m2", MiniMaxM2ToolParser), reasoning=Parser("minimax-m2", MiniMaxM2ReasoningParser),
    tokenizer="minimax-m2", template="MiniMax-M2.jinja", templates=("minimax-m2/chat_template.jinja",),
    end_of_turn=("[e~[",),
    peers=Peers(vllm=("minimax_m2",), sglang=("minimax-m2",)),
)
