"""GigaChat 3.5 ("GCML"): DSML calls under ``｜GCML｜``, ``<think>`` reasoning behind a ``reasoning`` switch."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..tools.dialects.dsml import GigaChat35ToolParser
from ._spec import Family, Parser, Peers


class GigaChat35ReasoningParser(ReasoningParser):
    """``<think>`` ... ``</think>``.  The base template thinks only when
    ``chat_template_kwargs.reasoning`` is true (then its prompt opens ``<think>`` and the reply
    holds only ``</think>``); the "Reasoning" checkpoint's template always opens it.  Given the
    prompt, its tail decides (both checkpoints); without it, the ``reasoning`` switch, else the
    usual thinking switches, else off (vLLM's ``gigachat35`` default)."""

    initial_mode = "auto"

    def starts_in_reasoning(self) -> bool:
        switch = self.request.template_kwargs.get("reasoning")
        if isinstance(switch, bool):
            return switch
        return self.request.thinking is True


FAMILY = Family(
    "gigachat35", "GigaChat 3.5: DSML <｜GCML｜tool_calls>, <think> behind the 'reasoning' switch",
    tool=Parser("gigachat35", GigaChat35ToolParser), reasoning=Parser("gigachat35", GigaChat35ReasoningParser),
    end_of_turn=("<|message_sep|>", "</s>"),
    peers=Peers(vllm=("gigachat35", "gigachat35"), sglang=("gigachat35",)),
    verified="PROTOCOLS.md and vLLM's gigachat35 tests only: no GigaChat 3.5 template or tokenizer (pseudo-tokens)",
)
