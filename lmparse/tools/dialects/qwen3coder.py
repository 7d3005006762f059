"""Qwen3-Coder / Qwen3.5: XML-like calls with the value between newlines::

    <tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>

V is raw text that may span lines; one newline after ``<parameter=K>`` and one before
``</parameter>`` are formatting.  The official template writes objects and arrays as
JSON and every other non-string with Jinja's ``string`` filter (``True``, ``None``).

In every Qwen tokenizer ``</parameter>`` is the tokens ``</``, ``parameter``, ``>``;
``<tool_call>`` and ``</tool_call>`` are single tokens.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

from ..xml import ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser
from ._syntax import arg_start_hook, function_hook, read_until
from ..._mypyc import mypyc_attr

FUNCTION: Final = "<function="
END_FUNCTION: Final = "</function>"
PARAMETER: Final = "<parameter="
END_PARAMETER: Final = "</parameter>"


# Qwen3.5 and Nemotron 3 Nano write this layout (their templates, rendered; Nemotron puts a
# newline after every block, which is content).
@mypyc_attr(allow_interpreted_subclasses=True)
class Qwen3CoderToolParser(XmlToolParser):
    summary = "<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>"
    tool_open_tags = ("<tool_call>",)
    tool_close_tag = "</tool_call>"
    # Both tags are added tokens (Qwen3 vocabulary): a spaced decoding parses alike (``lmparse.tools.spaced``).
    spaced_tokens: ClassVar[tuple[str, ...]] = (*tool_open_tags, tool_close_tag)
    arg_value_close = END_PARAMETER
    arg_value_close_prefixes = ("</parameter", "</")
    value_newlines = True
    # Qwen3-Coder sometimes writes ``<function=...>`` blocks with no ``<tool_call>`` around
    # them; such a block counts once its first parameter (or its end) confirms it.
    payload_open_tags: ClassVar[tuple[str, ...]] = (FUNCTION,)
    # The call syntax constraints are built from (lmparse.tools.syntax).
    argument_style = "qwen_xml"
    parameter_open = PARAMETER
    function_close = END_FUNCTION
    # Qwen3-Coder and Qwen3.5 write "\n\n" between the content and the first block, "\n"
    # between blocks (Nemotron 3's "\n" after each block is text).
    block_lead = "\n\n"
    block_separator: ClassVar[str | None] = "\n"

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        return function_hook(payload, pos, FUNCTION, _read_name)

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, self.parameter_open, self.function_close, self.tool_close_tag)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = _read_name(payload, pos + len(self.parameter_open))
        if not found:
            return found
        return found[1], found[0].strip()

    @staticmethod
    def template_text(value: Any) -> str:
        """A non-string value as the template writes it (strings are written raw)."""
        return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        nl = "\n" if cls.value_newlines else ""
        blocks = []
        for name, arguments in calls:
            params = "".join(
                f"{PARAMETER}{key}>{nl}{v if isinstance(v, str) else cls.template_text(v)}{nl}{END_PARAMETER}\n"
                for key, v in json.loads(arguments).items()
            )
            blocks.append(f"{cls.tool_open_tags[0]}\n{FUNCTION}{name}>\n{params}{END_FUNCTION}\n{cls.tool_close_tag}")
        sep = cls.block_separator
        return ("\n" if sep is None else sep).join(blocks)  # None (no template read): on their own lines


@mypyc_attr(allow_interpreted_subclasses=True)
class Step3p5ToolParser(Qwen3CoderToolParser):
    """Step-3.5-Flash: parses as Qwen3-Coder; its template writes blocks back to back, right
    after the content (``Let me check.<tool_call>``)."""

    summary = "Qwen3-Coder's <tool_call><function=NAME><parameter=K> XML, blocks back to back"

    block_lead = ""
    block_separator = ""


@mypyc_attr(allow_interpreted_subclasses=True)
class Step5ToolParser(Qwen3CoderToolParser):
    """Step-5: parses as Qwen3-Coder; vLLM's ``step5`` keeps whitespace-only content before a
    call and never strips content around calls, so no whitespace is the calls' own (no
    template is published to say otherwise)."""

    summary = "Qwen3-Coder's <tool_call><function=NAME><parameter=K> XML, whitespace around blocks kept"

    block_lead = ""
    block_separator = ""


def _read_name(payload: str, pos: int) -> Found[tuple[str, int]]:
    return read_until(payload, pos, ">")
