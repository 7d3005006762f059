"""Tencent Hunyuan Hy3 (HY-V3) / HY-V4: GLM-style pairs in suffixed tags inside ``<tool_calls:S>``.

Every structural tag carries the checkpoint's suffix S inside its brackets; the Hy3 template
(``tencent-Hy3.jinja``) uses ``:opensource``.  Its layout, all calls of a turn in one block::

    <tool_calls:S>\\n<tool_call:S>NAME<tool_sep:S>\\n<arg_key:S>K</arg_key:S>\\n<arg_value:S>V</arg_value:S>\\n
    </tool_call:S>\\n</tool_calls:S>

(``</tool_call:S>`` on the same line as the last pair's newline).  HY-V4 (vLLM's structural
tag; no template here) writes no ``<tool_sep:S>`` and no newlines, and a call without
arguments as ``<tool_call:S>NAME</tool_call:S>``: the name is the text up to the first tag,
trimmed, so one parser reads both.  Values: strings raw, other types as JSON; typed by the
schema.  Reused machinery: ``XmlToolParser`` (the value driver: a string streams as it grows,
a typed value converts at ``</arg_value:S>``) and the readers of ``_syntax.py``.

Only the ``:opensource`` suffix is read: vLLM and SGLang take HY-V4's suffix from the vocabulary
(``<tool_calls:6124c78e>``), which a parser here is not given.  Tokens (unverified: no
Hunyuan tokenizer here): the tags are single vocabulary entries per vLLM and SGLang; the parser
matches text, so a split anywhere is held.  No call syntax for constraints: XGrammar has no
suffixed style (PROTOCOLS.md: no builtin for ``hunyuan``).
"""

from __future__ import annotations

from ...registry import ToolParserManager
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser, argument_items
from ._syntax import arg_start_hook, at_partial, key_value_hook, skip_ws

SUFFIX = ":opensource"
OPEN = f"<tool_calls{SUFFIX}>"
CLOSE = f"</tool_calls{SUFFIX}>"
TOOL_CALL = f"<tool_call{SUFFIX}>"
END_TOOL_CALL = f"</tool_call{SUFFIX}>"
TOOL_SEP = f"<tool_sep{SUFFIX}>"
ARG_KEY = f"<arg_key{SUFFIX}>"
END_ARG_KEY = f"</arg_key{SUFFIX}>"
ARG_VALUE = f"<arg_value{SUFFIX}>"
END_ARG_VALUE = f"</arg_value{SUFFIX}>"
_MAX_NAME = 256  # a longer "name" is prose


@ToolParserManager.register_module(["hunyuan", "hy-v3", "hy-v4"])
class HunyuanToolParser(XmlToolParser):
    summary = (f"{OPEN}\\n{TOOL_CALL}NAME{TOOL_SEP}\\n{ARG_KEY}K{END_ARG_KEY}\\n{ARG_VALUE}V{END_ARG_VALUE}\\n…"
               f"{END_TOOL_CALL}\\n{CLOSE}")
    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE
    tool_close_prefixes = ()  # unverified (no tokenizer): a split anywhere is held
    arg_value_close = END_ARG_VALUE
    arg_value_close_prefixes = ()
    # The template builds every tag with ``'<tool_calls{}>'.format(HYTK)``: these pieces are what it contains.
    template_markers = ("<tool_calls{}>", "<tool_call{}>", "<tool_sep{}>", "<arg_key{}>", "<arg_value{}>")

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        start, pos = pos, skip_ws(payload, pos)
        if not payload.startswith(TOOL_CALL, pos):
            if pos == len(payload) or at_partial(payload, pos, TOOL_CALL):
                return None
            return start, None, "done"  # the block's close tag (or stray text) ends the payload
        begin = pos + len(TOOL_CALL)
        lt = payload.find("<", begin, begin + _MAX_NAME)
        if lt == -1:
            return MALFORMED if len(payload) - begin >= _MAX_NAME else None
        name = payload[begin:lt].strip()
        if not name or any(c.isspace() for c in name):
            return MALFORMED
        if payload.startswith(TOOL_SEP, lt):
            return lt + len(TOOL_SEP), name, "arg_start"
        if payload.startswith(ARG_KEY, lt) or payload.startswith(END_TOOL_CALL, lt):
            return lt, name, "arg_start"
        if at_partial(payload, lt, TOOL_SEP, ARG_KEY, END_TOOL_CALL):
            return None
        return MALFORMED

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, ARG_KEY, END_TOOL_CALL, CLOSE)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        return key_value_hook(payload, pos + len(ARG_KEY), END_ARG_KEY, ARG_VALUE)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """The Hy3 template's layout."""
        if not calls:
            return ""
        body = "".join(
            f"{TOOL_CALL}{name}{TOOL_SEP}\n"
            + "".join(f"{ARG_KEY}{k}{END_ARG_KEY}\n{ARG_VALUE}{v}{END_ARG_VALUE}\n"
                      for k, v in argument_items(arguments))
            + f"{END_TOOL_CALL}\n"
            for name, arguments in calls
        )
        return f"{OPEN}\n{body}{CLOSE}"
