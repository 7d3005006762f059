"""Muse Spark / Muse Glimmer ("ATEM"): ``<|start|>assistant to=R<|message|>`` messages; home of the ``muse`` dialect.

``to=self`` bodies are reasoning, ``to=user`` bodies content, any other recipient's body an
``<atem:function_calls>`` block.  The framing markers are the dialect's; the reasoning parser
gets them from there."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.muse import END_OF_MESSAGE, END_OF_TURN, FRAMING, REASONING_HEADER, START, MuseToolParser
from ._spec import Family, Parser, Peers

MUSE = Parser("muse", MuseToolParser)
_NAMES = ("muse", "muse-spark", "muse-glimmer")


class MuseReasoningParser(ModelOpensReasoning):
    """A ``to=self`` message's body (several are concatenated).  The generation prompt ends
    in ``<|start|>assistant`` and the template has no thinking switch: the reply starts with
    a header, so nothing is reasoning until `` to=self<|message|>`` arrives.  A reasoning
    message left without ``<|eom|>`` ends at the next ``<|start|>`` or content header (framing)."""

    start_tag = REASONING_HEADER
    end_tag = END_OF_MESSAGE
    start_tag_prefixes = (" to=self", " to")
    framing_markers = FRAMING

    @classmethod
    def render(cls, reasoning: str) -> str:
        """The reasoning message and the next message's start (its header follows)."""
        return f"{cls.start_tag}{reasoning}{cls.end_tag}{START}"


FAMILY = Family(
    "muse", "Muse Spark/Glimmer (ATEM): <|start|>assistant to=R<|message|>, <atem:function_calls><atem:invoke ..>",
    tool=MUSE, tool_names=_NAMES, reasoning=Parser("muse", MuseReasoningParser), reasoning_names=_NAMES,
    template="muse-glimmer.jinja", end_of_turn=(END_OF_TURN,),
    peers=Peers(vllm=("muse", "musespark", "muse_glimmer"), llamacpp=("muse-glimmer",)),
    verified="template (muse-glimmer.jinja) and PROTOCOLS.md; no Muse tokenizer here: token facts from "
             "bellwether's recorded pieces, markers as pseudo-tokens",
)
