"""Apertus: ``<|tools_prefix|>[{"NAME": {ARGS}}, …]<|tools_suffix|>``.

Wire syntax (``Apertus-8B-Instruct.jinja``, rendered)::

    Let me check.<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Rome"}}]<|tools_suffix|>

A JSON array of one-key objects, the key the function name (written unescaped by the
template), the value the arguments; calls separated by ``, ``; no ids.  Built on
``JsonToolParser`` with ``name_is_key`` (llama.cpp's FUNC_NAME_AS_KEY shape): the name goes
out at its colon, the arguments verbatim as they arrive.  The template writes tool outputs
inline (``[out1, out2]``) after the block, prompt side only.

Tokens (unverified: no Apertus vocabulary is here; vLLM keeps special tokens for it): the
``<|…|>`` markers are single special tokens, so no proper prefix of one ends a chunk.
"""

from __future__ import annotations

from typing import Final

import json

from ..json_envelope import JsonToolParser
from ..._mypyc import mypyc_attr

TOOLS_PREFIX: Final = "<|tools_prefix|>"
TOOLS_SUFFIX: Final = "<|tools_suffix|>"


@mypyc_attr(allow_interpreted_subclasses=True)
class ApertusToolParser(JsonToolParser):
    summary = '<|tools_prefix|>[{"NAME": {...}}, {"NAME2": {...}}]<|tools_suffix|>'
    tool_open_tags = (TOOLS_PREFIX,)
    tool_close_tag = TOOLS_SUFFIX
    tool_close_prefixes = ()
    name_is_key = True

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        body = ", ".join(f"{{{json.dumps(name, ensure_ascii=False)}: {args}}}" for name, args in calls)
        return f"{TOOLS_PREFIX}[{body}]{TOOLS_SUFFIX}"
