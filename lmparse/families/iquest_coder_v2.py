"""IQuest-Coder V2: GLM-4.7's ``<arg_key>`` pairs under ``<iquestcoder_tool_call>``, no reasoning markers.

(IQuest-Coder v1 writes Qwen3-Coder's calls: the ``iquest-coder`` name of the ``qwen3coder`` family.)
"""

from __future__ import annotations

from ..tools.dialects.glm47 import IquestCoderV2ToolParser
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "iquest-coder-v2", "IQuest-Coder V2: <iquestcoder_tool_call>NAME<arg_key>..</arg_key><arg_value>..",
    tool=Parser("iquest-coder-v2", IquestCoderV2ToolParser),
    peers=Peers(vllm=("iquest_coder_v2",)),
    verified="no IQuest-Coder V2 template or vocabulary here: vLLM's iquest_coder_v2 parser and tests (PROTOCOLS.md)",
)
