"""ZAYA1 (Zyphra): Qwen3-Coder XML (or a JSON envelope) inside ``<zyphra_tool_call>``, ``<think>`` reasoning."""

from __future__ import annotations

from ..reasoning import DefaultReasoningParser
from ..tools.dialects.zaya import ZayaToolParser
from ._shared import CHATML
from ._spec import Family, Parser, Peers


class ZayaReasoningParser(DefaultReasoningParser):
    """In reasoning unless ``enable_thinking`` is false; a ``<zyphra_tool_call>`` (or a bare
    ``<function=``) inside it ends it (vLLM's ``zaya``)."""

    tool_call_ends_reasoning = True


FAMILY = Family(
    "zaya", "ZAYA1: <think> reasoning, Qwen3-Coder XML or JSON inside <zyphra_tool_call>",
    tool=Parser("zaya", ZayaToolParser), tool_names=("zaya", "zaya-xml"),
    reasoning=Parser("zaya", ZayaReasoningParser), end_of_turn=CHATML,
    peers=Peers(vllm=("zaya", "zaya_xml")),
    verified="PROTOCOLS.md only (vLLM's and Zyphra's parsers): no ZAYA1 template or tokenizer (pseudo-tokens)",
)
