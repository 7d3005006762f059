"""InternLM2 / 2.5 / Intern-S1: ``<|action_start|><|plugin|>\\n{"name": ..., "parameters": {...}}<|action_end|>``.

All three markers are single special tokens (ids 92538-92543 hold the added tokens
in InternLM2), so the upstream must keep special tokens for this parser to see them.
"""

from __future__ import annotations

from typing import Final

from ..json_envelope import JsonToolParser
from ..spaced import spaced_open_tags
from ..._mypyc import mypyc_attr

ACTION_START: Final = "<|action_start|>"
PLUGIN: Final = "<|plugin|>"
OPEN: Final = ACTION_START + PLUGIN
CLOSE: Final = "<|action_end|>"


@mypyc_attr(allow_interpreted_subclasses=True)
class InternLMToolParser(JsonToolParser):
    summary = '<|action_start|><|plugin|>\\n{"name": NAME, "parameters": {...}}<|action_end|>'
    # A decoding with spaces between special tokens writes ``<|action_start|> <|plugin|> \n{…} <|action_end|>``.
    spaced_tokens = (ACTION_START, PLUGIN, CLOSE)
    tool_open_tags = spaced_open_tags((OPEN,), spaced_tokens)
    tool_close_tag = CLOSE
    argument_field = "parameters"
    block_separator = None  # no InternLM template in the test data to read it from

    render_template = "{open}\n{body}{close}"
