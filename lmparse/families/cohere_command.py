"""Cohere Command A / R7B / North: ``<|START_THINKING|>`` reasoning, ``<|START_ACTION|>[JSON]`` calls."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..tools.dialects.cohere_command import CohereCommandToolParser
from ._spec import Family, Parser, Peers

class CohereCommandReasoningParser(ReasoningParser):
    """``<|START_THINKING|>`` ... ``<|END_THINKING|>``.  Cohere2MoE prefills the opener
    (reasoning on, its default) or an empty block; R7B prefills an empty block when
    ``enable_thinking`` is off and nothing when on (the model opens): the prompt's tail
    decides, else the default rule.  Both markers one special token each (unverified)."""

    start_tag = "<|START_THINKING|>"
    end_tag = "<|END_THINKING|>"
    # cmd3's and cmd4's content wrappers, dropped from the content with or without tools.
    framing_markers = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")
    initial_mode = "auto"


FAMILY = Family(
    "cohere-command", "Cohere Command A/R7B/North: <|START_THINKING|> reasoning, <|START_ACTION|>[JSON] calls",
    tool=Parser("cohere-command", CohereCommandToolParser), tool_names=("cohere-command", "command-a"),
    reasoning=Parser("cohere-command", CohereCommandReasoningParser), reasoning_names=("cohere-command", "command-a"),
    template="Cohere2MoE.jinja", templates=("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",),
    peers=Peers(vllm=("cohere_command4",), sglang=("cohere_command4",), llamacpp=("parsers/cohere2moe",)),
    verified="templates only: no Cohere vocabulary (pseudo-tokens)",
)
