"""Tencent Hy3 (HY-V3): ``<think:opensource>`` reasoning, ``<tool_calls:opensource>`` GLM-style pairs.

The tag suffix (``:opensource``, or what a checkpoint's vocabulary says) is the dialect's fact
(``lmparse.tools.dialects.hunyuan``); the reasoning tags read it from there too."""

from __future__ import annotations

from typing import Any

from ..reasoning import ReasoningParser
from ..tools.dialects.hunyuan import SUFFIX, HunyuanToolParser, tokenizer_vocab
from ._spec import Family, Parser, Peers

HUNYUAN = Parser("hunyuan", HunyuanToolParser)

# ``reasoning_effort`` values (SGLang's mapping of the OpenAI levels onto the template's).
_EFFORT_THINKS = {"none": False, "no_think": False, "minimal": True, "low": True, "medium": True, "high": True,
                  "xhigh": True, "max": True}


class HunyuanReasoningParser(ReasoningParser):
    """``<think:opensource>`` ... ``</think:opensource>`` (Hy3).  The template's
    ``reasoning_effort`` (``high``, ``low``, ``no_think``; default ``no_think``) prefills the
    opener (low / high) or an empty block: the reply starts in reasoning iff the effort is
    low or high (or ``enable_thinking`` is true); the prompt's tail settles it when given.
    Tags unverified (no Hunyuan tokenizer here)."""

    start_tag = f"<think{SUFFIX}>"
    end_tag = f"</think{SUFFIX}>"
    initial_mode = "auto"
    default_effort = "no_think"  # the Hy3 template's (and vLLM hy_v3's) default

    @classmethod
    def for_tokenizer(cls, tokenizer: Any) -> type[ReasoningParser]:
        """The tags with the suffix the tokenizer's vocabulary has, and HY-V4's default effort
        when it has no ``<tool_sep…>``; unchanged without Hunyuan tags."""
        found = tokenizer_vocab(tokenizer)
        if found is None:
            return cls
        return _with_vocabulary(cls, found.suffix, "high" if found.v4 else cls.default_effort)

    def starts_in_reasoning(self) -> bool:
        effort = self.request.template_kwargs.get("reasoning_effort")
        if effort is None and self.request.thinking is not None:
            return self.request.thinking
        return _EFFORT_THINKS.get(str(effort or self.default_effort), False)


_CLASSES: dict[tuple[type, str, str], type[ReasoningParser]] = {}


def _with_vocabulary(base: type[HunyuanReasoningParser], suffix: str, effort: str) -> type[ReasoningParser]:
    """One class per (parser, suffix, default effort)."""
    if f"<think{suffix}>" == base.start_tag and effort == base.default_effort:
        return base
    key = (base, suffix, effort)
    if key not in _CLASSES:
        _CLASSES[key] = type(base.__name__, (base,), {
            "start_tag": f"<think{suffix}>", "end_tag": f"</think{suffix}>", "default_effort": effort})
    return _CLASSES[key]


FAMILY = Family(
    "hunyuan", "Tencent Hy3: <think:opensource> reasoning, <tool_calls:opensource> GLM-style pairs "
               "(no vocabulary: pseudo-tokens)",
    tool=HUNYUAN, tool_names=("hunyuan", "hy-v3"),
    reasoning=Parser("hunyuan", HunyuanReasoningParser), reasoning_names=("hunyuan", "hy-v3"),
    template="tencent-Hy3.jinja",
    peers=Peers(vllm=("hy_v3", "hy_v3"), sglang=("hunyuan", "hunyuan")),
    verified="template only: no Hunyuan vocabulary (pseudo-tokens)",
)
