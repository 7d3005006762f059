"""Qwen3-Coder: ``<tool_call><function=..><parameter=..>`` XML; home of the ``qwen3coder`` dialect."""

from __future__ import annotations

from ..tools.dialects.qwen3coder import Qwen3CoderToolParser
from ._shared import CHATML
from ._spec import Family, Parser, Peers

QWEN3CODER = Parser("qwen3coder", Qwen3CoderToolParser)

FAMILY = Family(
    "qwen3coder", "Qwen3-Coder: <tool_call><function=..><parameter=..> XML",
    # ``interns2-preview``: Intern-S2 preview writes the same calls; ``iquest-coder``: IQuest-Coder v1
    # (vLLM ``iquest_coder``, a Qwen3-Coder subclass) too; ``qwen3-tagged``: SMG's Symphony name for
    # this call syntax (its ``qwen3_tagged`` table) (PROTOCOLS.md).
    tool=QWEN3CODER, tool_names=("qwen3coder", "qwen3-coder", "interns2-preview", "iquest-coder", "qwen3-tagged"),
    tokenizer="qwen3", template="Qwen3-Coder.jinja", end_of_turn=CHATML,
    peers=Peers(vllm=("qwen3_coder",), sglang=("qwen3_coder",), lmdeploy=("qwen3coder",), smg=("qwen3_tagged",)),
)
