"""Qwen2.5 / Qwen3 / QwQ / Hermes: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

``<tool_call>`` and ``</tool_call>`` are single tokens in the Qwen2.5 and Qwen3
tokenizers, so no proper prefix of them ends a chunk at a token boundary.
"""

from __future__ import annotations

from typing import Final

from ..json_envelope import JsonToolParser
from ..._mypyc import mypyc_attr

OPEN: Final = "<tool_call>"
CLOSE: Final = "</tool_call>"


# Granite 4.0 / 4.1 write this dialect byte for byte (their templates, rendered).
@mypyc_attr(allow_interpreted_subclasses=True)
class QwenToolParser(JsonToolParser):
    summary = '<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>'
    # ``<tool_call>`` alone is in Qwen3-Coder, GLM and MiniMax-M3 templates too.
    template_markers = (f'{OPEN}\n{{"name": "', CLOSE)
    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE
    # Both tags are added tokens: a decoding with spaces between them parses alike, and the
    # space after the close tag is layout (``lmparse.tools.spaced``).
    spaced_tokens = (OPEN, CLOSE)
    tool_close_prefixes = ()
    argument_field = "arguments"
    # Qwen2.5, Qwen3 and Granite 4 write "\n" before every block: after the content, and between blocks.
    block_lead = "\n"
    block_separator = "\n"
