"""Kimi-K3 (XTML): ``<|open|>think/response/tools`` elements, typed ``<|open|>argument`` values."""

from __future__ import annotations

from ..reasoning import ReasoningParser
from ..tools.dialects.kimi_k3 import FRAMING, KimiK3ToolParser, spaced_variants
from ._spec import Family, Parser, Peers

class KimiK3ReasoningParser(ReasoningParser):
    """``<|open|>think<|sep|>`` ... ``<|close|>think<|sep|>``, then the content inside
    ``<|open|>response<|sep|>`` ... ``<|close|>response<|sep|>`` (unwrapped: the framing is
    dropped, and the response opener ends reasoning whose closer was skipped).  The template
    thinks unless ``thinking`` is false; its generation prompt ends in the think opener or the
    response opener, so the prompt's tail settles it when given."""

    start_tag = "<|open|>think<|sep|>"
    end_tag = "<|close|>think<|sep|>"
    # The dialect's message framing (shared with the tool parser), and the think closer as a
    # detokenizer with spaces_between_special_tokens writes it (``<|close|> think <|sep|>``):
    # a framing marker ends reasoning too.
    framing_markers = (*FRAMING, *spaced_variants(end_tag))
    initial_mode = "auto"


FAMILY = Family(
    "kimi-k3", "Kimi-K3: XTML <|open|>think/response/tools elements, typed <|open|>argument values "
               "(no public vocabulary: pseudo-tokens)",
    tool=Parser("kimi-k3", KimiK3ToolParser), reasoning=Parser("kimi-k3", KimiK3ReasoningParser),
    template="Kimi-K3.jinja",
    peers=Peers(vllm=("kimi_k3",), sglang=("kimi_k3",), llamacpp=("parsers/kimi-k3",)),
    verified="template only: no Kimi-K3 vocabulary (pseudo-tokens)",
)
