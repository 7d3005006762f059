"""IQuest-Q1: ``<think>`` reasoning, GLM-4.7's ``<arg_key>`` pairs under ``<iquest_tool_call>``, inline."""

from __future__ import annotations

from ..tools.dialects.glm47 import IquestToolParser
from ._shared import THINK
from ._spec import Family, Parser, Peers

# With thinking on the prompt opens the block (``<think>\n``); with it off the reply is plain.
FAMILY = Family(
    "iquest", "IQuest-Q1: <think> reasoning, <iquest_tool_call>NAME<arg_key>..</arg_key><arg_value>.. inline",
    tool=Parser("iquest", IquestToolParser), reasoning=THINK, reasoning_names=("iquest",),
    peers=Peers(smg=("iquest",)),
    verified="no IQuest template or vocabulary here: bellwether's iquest-q1 rendering and token ids, "
             "SMG Symphony's iquest format and contract tests (PROTOCOLS.md)",
)
