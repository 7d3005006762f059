"""K2 Horizon (IFM): ``<ifm|think>`` reasoning by effort, ``<ifm|tool_calls>`` groups of typed pairs."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..request import ParserRequest
from ..tools.dialects.k2_horizon import TOOL_CALLS, K2HorizonToolParser
from ._spec import Family, Parser, Peers

# ``chat_template_kwargs.reasoning_effort`` -> the block's tag name (vLLM's k2_horizon reasoning parser).
EFFORT_TAGS = {"high": "think", "medium": "think_fast", "low": "think_faster"}


class K2HorizonReasoningParser(ReasoningParser):
    """``<ifm|think>`` ... ``</ifm|think>`` at effort ``high`` (the default), ``<ifm|think_fast>``
    at ``medium``, ``<ifm|think_faster>`` at ``low`` (an unknown effort: the default's tags).
    The generation prompt opens the block, so a reply starts in reasoning (unless the request
    turns thinking off) and a generated opener is dropped; ``<ifm|tool_calls>`` ends it."""

    start_tag = "<ifm|think>"
    end_tag = "</ifm|think>"
    tool_call_ends_reasoning = True

    def __init__(self, request: ParserRequest, prompt: str | None = None) -> None:
        super().__init__(request, prompt)
        tag = EFFORT_TAGS.get(str(request.template_kwargs.get("reasoning_effort", "high")), "think")
        if tag != "think":
            self.start_tag, self.end_tag = f"<ifm|{tag}>", f"</ifm|{tag}>"


K2_HORIZON = Parser("k2-horizon", K2HorizonToolParser)

FAMILY = Family(
    "k2-horizon", f"K2 Horizon (IFM): <ifm|think> by effort, {TOOL_CALLS} groups of key/[type/]value pairs "
                  "(no vocabulary: pseudo-tokens)",
    tool=K2_HORIZON, tool_names=("k2-horizon", "k2_horizon"),
    reasoning=Parser("k2-horizon", K2HorizonReasoningParser), reasoning_names=("k2-horizon", "k2_horizon"),
    end_of_turn=("<|ifm|im_end|>",),
    peers=Peers(vllm=("k2_horizon", "k2_horizon"), smg=("k2_horizon",)),
    verified="PROTOCOLS.md and vLLM's k2_horizon tests only: no template or vocabulary here (pseudo-tokens)",
)
