"""Llama 3.1 / 3.2 JSON tool calls.

``<|python_tag|>{"name": ..., "parameters": {...}}`` or, as the official template
renders custom tools, a bare JSON object at the very start of the reply.  There is
no close tag: the block ends with the envelope, and further calls follow after
``;``.  ``<|python_tag|>`` is one special token (gone if the server skips them).
"""

from __future__ import annotations

from typing import Final

import json

from ..json_envelope import JsonToolParser
from ..._mypyc import mypyc_attr

PYTHON_TAG: Final = "<|python_tag|>"


@mypyc_attr(allow_interpreted_subclasses=True)
class Llama3JsonToolParser(JsonToolParser):
    summary = '<|python_tag|>{"name": NAME, "parameters": {...}} or a bare JSON object at the start'
    tool_open_tags = (PYTHON_TAG,)
    spaced_tokens = (PYTHON_TAG,)  # an added token: a spaced decoding parses alike (``lmparse.tools.spaced``)
    block_separator = None  # the Llama 3.x templates write no <|python_tag|> blocks to read it from
    tool_close_tag = None
    argument_field = "parameters"
    call_separator = ";"
    bare_start = True

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "; ".join(
            f'{{"name": {json.dumps(name, ensure_ascii=False)}, "parameters": {args}}}' for name, args in calls
        )
