"""MiniCPM5: ``<function name="NAME"><param name="K">V</param>…</function>`` with no outer block.

Wire syntax (``openbmb-MiniCPM5-1B.jinja``)::

    Let me check.
    <function name="get_weather"><param name="city"><![CDATA[Paris "FR" & <x>]]></param>
    <param name="days">3</param></function>
    <function name="f"></function><|im_end|>

(the second line break, inside the first call, is for the page only).

The template writes a newline before each call (before the first only after content): it
is the call's syntax, not content.  A string value is raw, wrapped in ``<![CDATA[…]]>``
when it holds ``<``, ``&`` or a newline (the wrapper is stripped; ``</param>`` inside it is
data, as llama.cpp reads it).  Every other value is printed with Python's ``str``
(``True``, ``None``, ``{'unit': 'c'}``): the schema types it (``convert_value`` tries JSON, then
a Python literal); an untyped value is its text.

Built on ``XmlToolParser`` (``tools/xml.py``): the CDATA wrapper is its ``value_wrapper``;
the hooks read the two tags (``read_attribute`` takes double- or single-quoted names).
A block opens at ``<function name=`` (a payload open tag, as Qwen3-Coder's bare
``<function=``), so it proves itself by its first parameter or its end before it counts.

Variants (vLLM ``minicpm5xml_tool_parser.py``): the collapsed ``<functionname="…">`` and
``<paramname="…">`` (the space lost in detokenization), and single-quoted or bare names.
Not accepted: byte-level ``Ġ`` / ``Ċ`` leaking into the text (a tokenizer bug the server
fixes by decoding properly) and ``<param>`` without a name (no key to give the value).

Tokens (unverified, no MiniCPM5 tokenizer here): vLLM says the tool tags are special tokens
(keep special tokens); llama.cpp preserves ``<function``, ``<param``, ``</function>``,
``</param>``, ``<think>`` and ``</think>``, so likely one token each.
"""

from __future__ import annotations

import json
from typing import Any

from ..xml import ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser
from ._syntax import arg_start_hook, at_partial, function_hook, read_attribute, skip_ws
from ..._mypyc import mypyc_attr

FUNCTION = "<function name="
END_FUNCTION = "</function>"
PARAM = "<param name="
END_PARAM = "</param>"
CDATA, END_CDATA = "<![CDATA[", "]]>"
FUNCTIONS = (FUNCTION, "<functionname=")  # the template's, then the collapsed variant
PARAMS = (PARAM, "<paramname=")


@mypyc_attr(allow_interpreted_subclasses=True)
class MiniCPM5ToolParser(XmlToolParser):
    summary = '<function name="N"><param name="K">V or <![CDATA[V]]></param>…</function>, one per line'
    tool_open_tags = ()
    tool_close_tag = None  # a block ends where its last function does
    # The template writes a newline before each call, after text and between calls: the
    # payload tag takes it (so a lead is the block's) and the router drops it as the separator.
    payload_open_tags = (*(f"\n{f}" for f in FUNCTIONS), *FUNCTIONS)
    block_lead = "\n"
    block_separator = "\n"
    template_markers = (FUNCTION, PARAM, CDATA)
    arg_value_close = END_PARAM
    arg_value_close_prefixes = ("</param", "</")  # unverified
    value_wrapper = (CDATA, END_CDATA)
    # The call syntax constraints are built from (lmparse.tools.syntax); XGrammar has no
    # style for this layout, so lmparse.constrain writes the parameters as GBNF.
    argument_style = "minicpm5_xml"
    parameter_open = PARAM
    function_close = END_FUNCTION
    one_call_per_block = True  # the router reads the layout between calls

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._quoted_head = False  # the block began as the template writes a call

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        at = skip_ws(payload, pos)
        opener = next((f for f in FUNCTIONS if payload.startswith(f, at)), None)
        if opener is None and at_partial(payload, at, *FUNCTIONS):
            return None
        opener = opener or FUNCTION
        self._quoted_head = self._quoted_head or payload.startswith((f'{opener}"', f"{opener}'"), at)
        return function_hook(payload, pos, opener, read_attribute)

    def _cut_is_syntax(self) -> bool:
        """Cut off after ``<function name="`` (tags the tokenizer keeps whole): a call, so the
        markup goes to ``dropped``; prose that merely says ``<function name=`` stays text."""
        return self._quoted_head

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        # No block close tag: the next function after a missing ``</function>`` ends this one.
        at = skip_ws(payload, pos)
        if payload.startswith(PARAMS[1], at):
            return at, "arg_name"
        if payload.startswith(FUNCTIONS[1], at):
            return at, "done"
        if at_partial(payload, at, PARAMS[1], FUNCTIONS[1]) and not at_partial(payload, at, PARAM, FUNCTION):
            return None
        return arg_start_hook(payload, pos, PARAM, END_FUNCTION, FUNCTION)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        opener = next(p for p in PARAMS if payload.startswith(p, pos))
        found = read_attribute(payload, pos + len(opener))
        if not found:
            return found
        return found[1], found[0].strip()

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "\n".join(
            f'{FUNCTION}"{name}">'
            + "".join(f'{PARAM}"{key}">{template_text(value)}{END_PARAM}' for key, value in json.loads(args).items())
            + END_FUNCTION
            for name, args in calls
        )


def template_text(value: Any) -> str:
    """A value as the template writes it: strings raw (CDATA-wrapped when they hold ``<``,
    ``&`` or a newline), everything else with Python's ``str``."""
    if isinstance(value, str):
        return f"{CDATA}{value}{END_CDATA}" if any(c in value for c in "<&\n") else value
    return str(value)
