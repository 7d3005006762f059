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

Variant: LFM2 may echo the call body after ``<|tool_call_end|>`` and close the echo with a
second, orphan ``<|tool_call_end|>`` (vLLM drops everything up to the last orphan end).
Here an echo is what starts with ``[`` right after the end marker (whitespace aside) and
runs to an orphan end marker within ``_ECHO_LIMIT`` characters, with no start marker
between: it is recorded in ``dropped``, not content.  Anything else after the end marker
(text, or a ``[`` with no orphan end in reach) is content as it was; it is held only while
an echo is still possible.

Tokens (unverified: no LFM2 vocabulary is here; vLLM keeps special tokens for it): the two
markers are single special tokens, so no proper prefix of one ends a chunk.
"""

from __future__ import annotations

from typing import Final

import json

from ...events import Events
from ...markers import skip_ws
from ..python_call import raw_quotable
from ..syntax import CallSyntax
from .pythonic import LIST_CLOSE, LIST_OPEN, SEPARATOR, PythonicToolParser
from ..._mypyc import mypyc_attr

TOOL_CALL_START: Final = "<|tool_call_start|>"
TOOL_CALL_END: Final = "<|tool_call_end|>"
ECHO: Final = "an echo of the call after its end marker, closed by an orphan end marker"
_ECHO_LIMIT: Final = 4096  # how far after the end marker an echo's own end marker is looked for


def lfm2_literal(value: object) -> str:
    """A JSON value as the template's ``format_arg_value`` writes it (a string that the
    template would break, with ``'``, ``\\`` or a control character, as a Python literal)."""
    if isinstance(value, str):
        return f"'{value}'" if raw_quotable(value) else repr(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)  # lists, numbers, True / False / None: Jinja's ``string`` filter


@mypyc_attr(allow_interpreted_subclasses=True)
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

    def _consume_close(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, bool]:
        end, closed = super()._consume_close(text, pos, events, final)
        if not closed or not text.endswith(TOOL_CALL_END, 0, end):
            return end, closed
        at = skip_ws(text, end)
        if at < len(text) and text[at] != LIST_OPEN:
            return end, True  # text after the block: content
        orphan = text.find(TOOL_CALL_END, at, at + _ECHO_LIMIT + len(TOOL_CALL_END))
        if orphan != -1 and text.find(TOOL_CALL_START, at, orphan) == -1:
            self._calls.cut(events, text[at:orphan + len(TOOL_CALL_END)], ECHO)
            return orphan + len(TOOL_CALL_END), True
        if final or len(text) - at > _ECHO_LIMIT or (orphan == -1 and TOOL_CALL_START in text[at:]):
            return end, True
        return pos, False  # an echo may still be arriving: wait (the close tag is read again)

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
