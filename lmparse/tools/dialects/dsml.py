"""DeepSeek-V3.2 / V4 / V4.1 DSML: ``<｜DSML｜function_calls>`` blocks of ``invoke`` elements.

Wire syntax (V4 writes ``tool_calls`` where V3.2 writes ``function_calls``; V4.1 puts a
space after the bar in every tag name and writes ``calls``: ``<｜DSML｜ calls>``,
``<｜DSML｜ invoke name=…>``; GigaChat 3.5 writes V4's tags with ``｜GCML｜`` for ``｜DSML｜``;
the dialects differ only in these tag names)::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>
    <｜DSML｜parameter name="N" string="false">{"json": 1}</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

One call per ``invoke``, several per block.  ``string="true"`` values are raw text
(no quotes, no escaping; streamed JSON-escaped), ``string="false"`` values are JSON,
forwarded verbatim.  The official templates put ``\\n\\n`` before the block; the block
is found without it too, also at the very start of a reply.  A V4 call without
arguments has a blank line inside its ``invoke``.

Tokenization: ``｜DSML｜`` (U+FF5C bars) is one token, special in V3.2 (so the server
must keep special tokens) and ordinary in V4; the tags around it are several tokens
(``</``, ``｜DSML｜``, ``function``, ``_c``, ``alls``, ``>``), so their closing tags can end
a chunk at the prefixes declared below (verified against both tokenizers).
"""

from __future__ import annotations

import json
import re
from typing import ClassVar, Literal

from ..spaced import spaced_open_tags
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser
from ._syntax import arg_start_hook, function_hook, read_until
from ..._mypyc import mypyc_attr

DSML = "｜DSML｜"
INVOKE = f"<{DSML}invoke"
END_INVOKE = f"</{DSML}invoke>"
PARAMETER = f"<{DSML}parameter"
END_PARAMETER = f"</{DSML}parameter>"
_ATTRIBUTE = re.compile(r'([A-Za-z_]+)\s*=\s*"([^"]*)"')
_DECLARED: dict[str, Literal["string", "json"]] = {"true": "string", "false": "json"}


def _attributes(payload: str, pos: int) -> Found[tuple[dict[str, str], int]]:
    """`` a="x" ...>`` after a tag name: ``(attributes, index after '>')``, None or MALFORMED."""
    found = read_until(payload, pos, ">", "<\n")
    if not found:
        return found
    text, end = found
    attributes = dict(_ATTRIBUTE.findall(text))
    if not attributes.get("name", "").strip() or (text[:1] and not text[:1].isspace()):
        return MALFORMED  # no name, or another tag that merely starts like this one
    return attributes, end


def _read_name(payload: str, pos: int) -> Found[tuple[str, int]]:
    found = _attributes(payload, pos)
    return (found[0]["name"], found[1]) if found else found


@mypyc_attr(allow_interpreted_subclasses=True)
class DsmlToolParser(XmlToolParser):
    """The DSML hooks and renderer; each version below is its tag names (data)."""

    tool_close_tag: ClassVar[str] = ""
    # What the template writes inside an invoke without parameters.
    empty_invoke: ClassVar[str] = ""
    # How a parameter without a ``string`` attribute is read: "" lets the schema decide,
    # "true" takes it as raw text (GigaChat 3.5).
    string_default: ClassVar[str] = ""
    # The call syntax constraints are built from (lmparse.tools.syntax).
    argument_style = "deepseek_xml"
    invoke_open: ClassVar[str] = INVOKE
    parameter_open = PARAMETER
    function_close = END_INVOKE
    arg_value_close = END_PARAMETER
    arg_value_close_prefixes: ClassVar[tuple[str, ...]] = (f"</{DSML}parameter", f"</{DSML}", "</")
    # Both templates write "\n\n" between the content and the block, one block per turn: a
    # block after a block gets the same.
    block_lead = "\n\n"
    block_separator = "\n\n"

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        return function_hook(payload, pos, self.invoke_open, _read_name)

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, self.parameter_open, self.function_close, self.tool_close_tag)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = _attributes(payload, pos + len(self.parameter_open))
        if not found:
            return found
        attributes, end = found
        declared = attributes.get("string", self.string_default).strip().lower()
        return end, attributes["name"].strip(), _DECLARED.get(declared)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        out = [cls.tool_open_tags[0], "\n"]
        for name, arguments in calls:
            out.append(f'{cls.invoke_open} name="{name}">\n')
            values = json.loads(arguments)
            for key, value in values.items():
                is_text = isinstance(value, str)
                flag, text = ("true", value) if is_text else ("false", json.dumps(value, ensure_ascii=False))
                out.append(f'{cls.parameter_open} name="{key}" string="{flag}">{text}{cls.arg_value_close}\n')
            if not values:
                out.append(cls.empty_invoke)
            out.append(f"{cls.function_close}\n")
        out.append(cls.tool_close_tag)
        return "".join(out)


@mypyc_attr(allow_interpreted_subclasses=True)
class DeepSeekV32ToolParser(DsmlToolParser):
    summary = '<｜DSML｜function_calls><｜DSML｜invoke name="N"><｜DSML｜parameter name="K" string="true">V</…>'
    # The templates build every tag from a ``dsml_token`` variable: only the pieces are literal.
    template_markers = (DSML, "function_calls>")
    # ``｜DSML｜`` is one added token: a decoding with spaces between added tokens writes
    # ``< ｜DSML｜ invoke``; the block's spaced open tag says so (``lmparse.tools.spaced``).
    spaced_tokens = (DSML,)
    tool_open_tags = spaced_open_tags((f"<{DSML}function_calls>",), spaced_tokens)
    tool_close_tag = f"</{DSML}function_calls>"
    tool_close_prefixes: ClassVar[tuple[str, ...]] = (
        f"</{DSML}function_calls", f"</{DSML}function_c", f"</{DSML}function", f"</{DSML}", "</")


# DeepSeek-V4 and V4.1 recover malformed output as vLLM 0.33+ does (PROTOCOLS.md): a block
# opened by a misspelled ``tool_calls`` tag, and an invoke with no block around it (an orphan,
# a payload open tag), which is a call only with a name the request offers and once its
# ``</｜DSML｜invoke>`` arrived (``bare_call_waits_for_close``); else it stays text.
@mypyc_attr(allow_interpreted_subclasses=True)
class DeepSeekV4ToolParser(DsmlToolParser):
    summary = '<｜DSML｜tool_calls><｜DSML｜invoke name="N"><｜DSML｜parameter name="K" string="true">V</…>'
    template_markers = (DSML, "tool_calls>")
    spaced_tokens = (DSML,)
    # (the misspellings: vLLM issue 51914)
    tool_open_tags = spaced_open_tags((f"<{DSML}tool_calls>", f"<{DSML}toolcalls>", f"<{DSML}tool>"), spaced_tokens)
    payload_open_tags = (f'{INVOKE} name="',)
    bare_call_waits_for_close = True
    tool_close_tag = f"</{DSML}tool_calls>"
    tool_close_prefixes: ClassVar[tuple[str, ...]] = (
        f"</{DSML}tool_calls", f"</{DSML}tool_c", f"</{DSML}tool", f"</{DSML}", "</")
    empty_invoke = "\n"


# V4.1 writes a space after the bar in every tag name and calls its block ``calls``.
DSML_V41 = f"{DSML} "


@mypyc_attr(allow_interpreted_subclasses=True)
class DeepSeekV41ToolParser(DsmlToolParser):
    summary = '<｜DSML｜ calls><｜DSML｜ invoke name="N"><｜DSML｜ parameter name="K" string="true">V</…>'
    # No V4.1 template is published; its tags would be built from the same variable.
    template_markers = (DSML_V41, " calls>")
    spaced_tokens = (DSML,)  # (``< ｜DSML｜  calls>``: the tag's own space stays)
    tool_open_tags = spaced_open_tags((f"<{DSML_V41}calls>", f"<{DSML_V41}tool_calls>"),  # (the older block name)
                                      spaced_tokens)
    payload_open_tags = (f'<{DSML_V41}invoke name="',)
    bare_call_waits_for_close = True
    tool_close_tag = f"</{DSML_V41}calls>"
    # Measured with the V4 tokenizer (V4.1's vocabulary is assumed shared, unverified):
    # ``</``, ``｜DSML｜``, `` calls`` / `` parameter``, ``>``.
    tool_close_prefixes = (f"</{DSML_V41}calls", f"</{DSML}", "</")
    arg_value_close = f"</{DSML_V41}parameter>"
    arg_value_close_prefixes = (f"</{DSML_V41}parameter", f"</{DSML}", "</")
    argument_style = "deepseek_v4_1_xml"  # XGrammar's style for the spaced parameter tags
    invoke_open = f"<{DSML_V41}invoke"
    parameter_open = f"<{DSML_V41}parameter"
    function_close = f"</{DSML_V41}invoke>"
    empty_invoke = "\n"


# GigaChat 3.5 ("GCML"): V4's tag names under its own bar-wrapped prefix.
GCML = "｜GCML｜"


@mypyc_attr(allow_interpreted_subclasses=True)
class GigaChat35ToolParser(DsmlToolParser):
    """GigaChat 3.5: V4's grammar with ``｜GCML｜``; a parameter without ``string`` is raw text
    (vLLM's ``gigachat35``).  No template is published; model output seen (vLLM's tests) puts
    ``\\n\\n`` before the block and ``\\n`` between its elements, or no whitespace at all.
    vLLM's test vocabulary makes the tags single tokens (unverified): no proper prefixes."""

    summary = '<｜GCML｜tool_calls><｜GCML｜invoke name="N"><｜GCML｜parameter name="K" string="true">V</…>'
    tool_open_tags = (f"<{GCML}tool_calls>",)
    tool_close_tag = f"</{GCML}tool_calls>"
    tool_close_prefixes = ()
    arg_value_close = f"</{GCML}parameter>"
    arg_value_close_prefixes = ()
    invoke_open = f"<{GCML}invoke"
    parameter_open = f"<{GCML}parameter"
    function_close = f"</{GCML}invoke>"
    string_default = "true"
    # XGrammar's ``deepseek_xml`` style spells DSML's tags: the parameters get a grammar of their own.
    argument_style = "gigachat35_xml"
