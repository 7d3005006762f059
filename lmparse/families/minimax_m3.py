"""MiniMax-M3: ``<mm:think>`` reasoning, ``]<]minimax[>[`` namespaced nested XML."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..tools.dialects.minimax_m3 import MiniMaxM3ToolParser
from ._spec import Family, Parser, Peers

class MiniMaxM3ReasoningParser(ReasoningParser):
    """``<mm:think>`` ... ``</mm:think>``.  The template's ``thinking_mode`` (enabled, disabled,
    adaptive; undefined = adaptive) prefills ``<mm:think>``, ``</mm:think>`` or nothing: the
    reply starts in reasoning only for ``enabled`` (or ``enable_thinking`` true), and the
    prompt's tail settles it when given.  In adaptive mode the model may answer after a bare
    ``</mm:think>``: dropped.  Both tags are single non-special tokens per vLLM (unverified)."""

    start_tag = "<mm:think>"
    end_tag = "</mm:think>"
    bare_end_tag_dropped = True
    initial_mode = "auto"

    def starts_in_reasoning(self) -> bool:
        mode = self.request.template_kwargs.get("thinking_mode")
        return mode == "enabled" if mode is not None else self.request.thinking is True


FAMILY = Family(
    "minimax-m3", "MiniMax-M3: <mm:think> reasoning, ]<]minimax[>[ namespaced nested XML (no vocabulary: "
                  "pseudo-tokens)",
    tool=Parser("minimax-m3", MiniMaxM3ToolParser), reasoning=Parser("minimax-m3", MiniMaxM3ReasoningParser),
    template="MiniMax-M3.jinja",
    peers=Peers(vllm=("minimax_m3",), sglang=("minimax-m3",), llamacpp=("parsers/minimax-m3",)),
    verified="template only: no MiniMax-M3 vocabulary (pseudo-tokens); M2's stands in for chunkings",
)
