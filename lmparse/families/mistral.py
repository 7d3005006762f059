"""Mistral / Magistral / Devstral: ``[THINK]`` reasoning, ``[TOOL_CALLS]`` calls."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.mistral import MistralToolParser
from ._spec import Family, Parser, Peers


class MistralReasoningParser(ModelOpensReasoning):
    """``[THINK]`` ... ``[/THINK]`` (Magistral, Ministral 3 reasoning): the model opens
    reasoning itself, so a reply starts plain.  Both tags are control tokens of the v13+
    tekken vocabularies; our SentencePiece v3/v7 and tekken 240911 files lack them."""

    start_tag = "[THINK]"
    end_tag = "[/THINK]"


MISTRAL_REASONING = Parser("mistral", MistralReasoningParser)

# Ministral 3 Reasoning's template is tokenizer v13: the ``mistral-v13`` family declares it.
FAMILY = Family(
    "mistral", "Mistral/Magistral: [THINK] reasoning, [TOOL_CALLS] calls",
    tool=Parser("mistral", MistralToolParser), reasoning=MISTRAL_REASONING,
    template="Mistral-Small-3.2-24B-Instruct-2506.jinja",
    templates=("mistralai-Mistral-Nemo-Instruct-2407.jinja",),
    end_of_turn=("</s>",),
    peers=Peers(vllm=("mistral",), sglang=("mistral",)),
)
