"""GLM-4.5 / 4.6: ``<tool_call>NAME\\n<arg_key>..</arg_key>\\n<arg_value>..``."""

from __future__ import annotations

from ..tools.dialects.glm47 import Glm45ToolParser
from ._shared import GLM, THINK
from ._spec import Family, Parser, Peers

FAMILY = Family(
    "glm45", "GLM-4.5/4.6: <tool_call>NAME\\n<arg_key>..</arg_key>\\n<arg_value>..",
    tool=Parser("glm45", Glm45ToolParser), tool_names=("glm45", "glm4.5"), reasoning=THINK, reasoning_names=("glm45",),
    tokenizer="glm-4.5", template="GLM-4.6.jinja", templates=("glm-4.5/chat_template.jinja",), end_of_turn=GLM,
    peers=Peers(vllm=("glm45",), sglang=("glm45",)),
)
