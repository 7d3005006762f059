"""Inkling (Thinking Machines, "TML"): typed ``<|message_model|>…<|content_KIND|>…<|end_message|>`` blocks."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..tools.dialects.inkling import END_MESSAGE, END_SAMPLING, FRAMING, MESSAGE, THINKING, InklingToolParser
from ._spec import Family, Parser, Peers


class InklingReasoningParser(ReasoningParser):
    """``<|content_thinking|>`` blocks, each ended by ``<|end_message|>`` (any number, joined).
    The prompt ends with ``<|message_model|>``, so a reply starts as content unless the
    prompt's tail is a thinking block's kind marker; the other kind markers are framing, dropped
    from the content, and end reasoning (the tool parser drops ``<|message_model|>`` and a text
    block's ``<|end_message|>`` as the block framing it is)."""

    start_tag = THINKING
    end_tag = END_MESSAGE
    framing_markers = FRAMING
    initial_mode = "auto"

    def starts_in_reasoning(self) -> bool:
        return False


FAMILY = Family(
    "inkling", f"Inkling (TML): {MESSAGE}NAME<|content_invoke_tool_json|>{{JSON}}{END_MESSAGE} blocks, "
               f"{THINKING} reasoning (no vocabulary: pseudo-tokens)",
    tool=Parser("inkling", InklingToolParser), reasoning=Parser("inkling", InklingReasoningParser),
    end_of_turn=(END_SAMPLING,),
    peers=Peers(vllm=("inkling", "inkling"), smg=("inkling",)),
    verified="PROTOCOLS.md only (its summary of vLLM's and SMG's inkling parsers): no template or vocabulary here "
             "(pseudo-tokens)",
)
