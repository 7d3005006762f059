"""Gemma 4: ``<|channel>thought`` reasoning, ``<|tool_call>call:NAME{key:<|"|>..<|"|>}`` calls."""

from __future__ import annotations

from ..reasoning import ModelOpensReasoning
from ..tools.dialects.gemma4 import Gemma4ToolParser
from ._spec import Family, Parser, Peers

class Gemma4ReasoningParser(ModelOpensReasoning):
    """``<|channel>thought\\n`` ... ``<channel|>``: ``thought`` + newline is the channel's label,
    not reasoning (dropped; a doubled ``<|channel>`` too).  Replies start plain (the templates
    prefill nothing, or an empty closed channel when thinking is off) and the model opens the
    channel itself; a ``<|tool_call>`` while reasoning ends it (vLLM's REASONING + TOOL_START).
    ``<|channel>`` 100 and ``<channel|>`` 101 are single special tokens in ``gemma-4/``."""

    start_tag = "<|channel>"
    start_label = "thought\n"
    end_tag = "<channel|>"
    tool_call_ends_reasoning = True
    initial_mode = "auto"  # a prompt ending inside an open channel starts in reasoning


FAMILY = Family(
    "gemma4", 'Gemma 4: <|channel>thought reasoning, <|tool_call>call:NAME{key:<|"|>..<|"|>}',
    tool=Parser("gemma4", Gemma4ToolParser), reasoning=Parser("gemma4", Gemma4ReasoningParser),
    tokenizer="gemma-4", template="google-gemma-4-31B-it.jinja", templates=("google-gemma-4-31B-it-interleaved.jinja",),
    peers=Peers(vllm=("gemma4", "gemma4"), sglang=("gemma4", "gemma4"), llamacpp=("parsers/gemma4",)),
)
