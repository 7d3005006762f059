"""GLM-4.7: ``<tool_call>NAME<arg_key>..</arg_key><arg_value>..`` inline; home of the ``glm47`` dialect."""

from __future__ import annotations

from ..tools.dialects.glm47 import Glm47ToolParser
from ._shared import GLM, THINK
from ._spec import Family, Parser, Peers

GLM47 = Parser("glm47", Glm47ToolParser)

FAMILY = Family(
    "glm47", "GLM-4.7/5: <tool_call>NAME<arg_key>..</arg_key><arg_value>..",
    tool=GLM47, reasoning=THINK, reasoning_names=("glm45",),
    tokenizer="glm-4.7-flash", template="GLM-4.7-Flash.jinja", templates=("glm-4.7-flash/chat_template.jinja",),
    end_of_turn=GLM,
    peers=Peers(vllm=("glm47",), sglang=("glm47",), lmdeploy=("glm47",)),
)
