"""ByteDance Seed-OSS: Qwen3-Coder's XML inside ``<seed:tool_call>`` ... ``</seed:tool_call>``.

The official template writes ``\\n<seed:tool_call>\\n<function=NAME>\\n`` then
``<parameter=K>V</parameter>\\n`` per argument and ``</function>\\n</seed:tool_call>``.
Unlike Qwen3-Coder, V sits directly between its tags (no formatting newlines, so a
value's own leading or trailing newline is data), and every non-string value goes
through Jinja's ``string`` filter, i.e. Python's ``str()`` (``True``, ``None``,
``{'k': 1}``), which the schema conversion reads back.

Tokenization: no public Seed-OSS tokenizer is available to verify against.  The
template lists ``<seed:tool_call>`` and ``</seed:tool_call>`` among its "special token
variables" (single tokens, like ``<seed:think>``), so the close tag is taken to have
no proper token prefix, and ``</parameter>`` to split as in the Qwen vocabularies.
"""

from __future__ import annotations

from typing import Any, Final

from .qwen3coder import Qwen3CoderToolParser
from ..._mypyc import mypyc_attr

OPEN: Final = "<seed:tool_call>"
CLOSE: Final = "</seed:tool_call>"


@mypyc_attr(allow_interpreted_subclasses=True)
class SeedOssToolParser(Qwen3CoderToolParser):
    summary = "<seed:tool_call>\\n<function=NAME>\\n<parameter=K>V</parameter>\\n</function>\\n</seed:tool_call>"
    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE
    spaced_tokens = ()  # no vocabulary here says its tags are single tokens
    payload_open_tags = ()  # only Qwen3-Coder writes bare <function=...> blocks
    tool_close_prefixes = ()
    value_newlines = False
    # No Seed-OSS template in the test data to read the layout from.
    block_lead = ""
    block_separator = None

    @staticmethod
    def template_text(value: Any) -> str:
        return str(value)
