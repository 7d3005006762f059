"""LFM2 / LFM2.5: ``<|tool_call_start|>[NAME(k=V, …), …]<|tool_call_end|>``.

Wire syntax (``LFM2.5-8B-A1B.jinja``, rendered)::

    Let me check.<|tool_call_start|>[get_weather(city='Paris "FR" & <x>', days=3, opts={"unit": "c"})]<|tool_call_end|>

The ``pythonic`` dialect inside two markers (its scanner and ``ast`` reading, reused as
they are; each call goes out whole at its ``)``), with no bare start: content before the
marker is text.  The template's literals are mixed: strings in single quotes *without
escaping*, dicts as JSON (``true``, ``null`` inside), lists and scalars as Python reprs
(``['a', 'b']``, ``True``, ``None``), so JSON's constants are read as literals too
(llama.cpp ``allow_json_literals``).  A string holding ``'`` is broken Python as the
template writes it; ``render`` writes such a string as a Python literal with escapes.

Tokens (unverified: no LFM2 vocabulary is here; vLLM keeps special tokens for it): the two
markers are single special tokens, so no proper prefix of one ends a chunk.
"""

from __future__ import annotations

import json

from ...registry import ToolParserManager
from ..python_call import raw_quotable
from ..syntax import CallSyntax
from .pythonic import LIST_CLOSE, LIST_OPEN, SEPARATOR, PythonicToolParser

TOOL_CALL_START = "<|tool_call_start|>"
TOOL_CALL_END = "<|tool_call_end|>"


def lfm2_literal(value: object) -> str:
    """A JSON value as the template's ``format_arg_value`` writes it (a string that the
    template would break, with ``'``, ``\\`` or a control character, as a Python literal)."""
    if isinstance(value, str):
        return f"'{value}'" if raw_quotable(value) else repr(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)  # lists, numbers, True / False / None: Jinja's ``string`` filter


@ToolParserManager.register_module("lfm2")
class Lfm2ToolParser(PythonicToolParser):
    summary = "<|tool_call_start|>[NAME(k=V, …), …]<|tool_call_end|> (Python and JSON literals)"
    tool_open_tags = (TOOL_CALL_START,)
    tool_close_tag = TOOL_CALL_END
    tool_close_prefixes = ()
    bare_start = False
    json_constants = True
    # The template writes the content and the one block with nothing between (and never two
    # blocks in a row): whitespace around and between blocks is the model's text.
    block_lead = ""
    block_separator = ""

    @classmethod
    def call_syntax(cls) -> CallSyntax:
        return CallSyntax("", "(", "python", ")", SEPARATOR, TOOL_CALL_START + LIST_OPEN, LIST_CLOSE + TOOL_CALL_END)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        body = SEPARATOR.join(
            f"{name}({SEPARATOR.join(f'{k}={lfm2_literal(v)}' for k, v in json.loads(arguments).items())})"
            for name, arguments in calls
        )
        return f"{TOOL_CALL_START}{LIST_OPEN}{body}{LIST_CLOSE}{TOOL_CALL_END}"
