"""Qwen3-Coder / Qwen3.5: ``<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>``.

V is raw text that may span lines; one newline after ``<parameter=K>`` and one before
``</parameter>`` are formatting.  The official template writes objects and arrays as
JSON and every other non-string with Jinja's ``string`` filter (``True``, ``None``).

In every Qwen tokenizer ``</parameter>`` is the tokens ``</``, ``parameter``, ``>``;
``<tool_call>`` and ``</tool_call>`` are single tokens.
"""

from __future__ import annotations

import json

from ...registry import ToolParserManager
from ..xml import MALFORMED, XmlToolParser
from ._xml_syntax import at_partial, read_until, skip_ws

FUNCTION = "<function="
END_FUNCTION = "</function>"
PARAMETER = "<parameter="
END_PARAMETER = "</parameter>"


@ToolParserManager.register_module(["qwen3coder", "qwen3-coder", "interns2-preview"])
class Qwen3CoderToolParser(XmlToolParser):
    tool_open_tags = ("<tool_call>",)
    tool_close_tag = "</tool_call>"
    arg_value_close = END_PARAMETER
    arg_value_close_prefixes = ("</parameter", "</")
    value_newlines = True

    def _consume_function(self, payload, pos, final):
        pos = skip_ws(payload, pos)
        if payload.startswith(FUNCTION, pos):
            found = read_until(payload, pos + len(FUNCTION), ">")
            if not found:
                return found if found is None else MALFORMED
            name, pos = found
            return (pos, name.strip(), "arg_start") if name.strip() else MALFORMED
        if pos == len(payload) or at_partial(payload, pos, FUNCTION):
            return None
        return pos, None, "done"

    def _consume_arg_start(self, payload, pos):
        pos = skip_ws(payload, pos)
        if payload.startswith(PARAMETER, pos):
            return pos, "arg_name"
        if payload.startswith(END_FUNCTION, pos):
            return pos + len(END_FUNCTION), "done"
        if payload.startswith(self.tool_close_tag, pos):
            return pos, "done"  # </function> missing: the outer close ends the call
        if pos == len(payload) or at_partial(payload, pos, PARAMETER, END_FUNCTION, self.tool_close_tag):
            return None
        return MALFORMED

    def _consume_arg_name(self, payload, pos):
        found = read_until(payload, pos + len(PARAMETER), ">")
        if not found:
            return found if found is None else MALFORMED
        return found[1], found[0].strip()

    @staticmethod
    def template_text(value) -> str:
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
        return "\n".join(blocks)
