"""GLM-5.x: GLM-4.7's inline calls; reasoning whose start the prompt decides (GLM-5.3 always prefills ``<think>``)."""

from __future__ import annotations

from ._shared import GLM
from .glm47 import GLM47
from .qwen3_5 import PROMPT_DECIDES
from ._spec import Family, Peers

FAMILY = Family(
    "glm5", "GLM-5: GLM-4.7 <arg_key> calls, <think> reasoning (prompt decides)",
    tool=GLM47, tool_names=("glm5",), reasoning=PROMPT_DECIDES, reasoning_names=("glm5",),
    tokenizer="glm-4.7-flash", end_of_turn=GLM,
    peers=Peers(vllm=("glm47",), sglang=("glm47",)),
    verified="no GLM-5 template or vocabulary: vLLM's glm47_moe covers GLM-4.7/5.x with one config (PROTOCOLS.md)",
)
