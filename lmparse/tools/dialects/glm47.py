"""GLM-4.5 / 4.6 / 4.7 / 5: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``.

GLM-4.5/4.6 put a newline after NAME and after each pair; 4.7 writes them inline; a
call without arguments is ``<tool_call>NAME</tool_call>``.  Every tag is one token
in both GLM vocabularies, so no proper prefix ends a chunk at a token boundary.
"""

from __future__ import annotations

import re

from ...registry import ToolParserManager
from ..xml import MALFORMED, XmlToolParser, argument_items
from ._xml_syntax import at_partial, read_until, skip_ws

ARG_KEY = "<arg_key>"
END_ARG_KEY = "</arg_key>"
ARG_VALUE = "<arg_value>"
END_ARG_VALUE = "</arg_value>"
_NAME_END = re.compile(r"[\n<]")


@ToolParserManager.register_module(["glm47", "glm45", "glm4.5"])
class Glm47ToolParser(XmlToolParser):
    tool_open_tags = ("<tool_call>",)
    tool_close_tag = "</tool_call>"
    arg_value_close = END_ARG_VALUE
    # Newlines in the 4.5/4.6 layout, inline in 4.7.
    render_newlines = False

    def _consume_function(self, payload, pos, final):
        pos = skip_ws(payload, pos)
        stop = _NAME_END.search(payload, pos)
        if stop is None:
            return None  # even at the end of input: a name without its terminator may be cut short
        end = stop.start()
        name = payload[pos:end].strip()
        if not name:
            return pos, None, "done"
        if any(c.isspace() for c in name):
            return MALFORMED  # prose, not a function name
        return end, name, "done" if payload.startswith(self.tool_close_tag, end) else "arg_start"

    def _consume_arg_start(self, payload, pos):
        pos = skip_ws(payload, pos)
        if payload.startswith(ARG_KEY, pos):
            return pos, "arg_name"
        if payload.startswith(self.tool_close_tag, pos):
            return pos, "done"
        if pos == len(payload) or at_partial(payload, pos, ARG_KEY, self.tool_close_tag):
            return None
        return MALFORMED

    def _consume_arg_name(self, payload, pos):
        found = read_until(payload, pos + len(ARG_KEY), END_ARG_KEY, forbidden="<")
        if not found:
            return found if found is None else MALFORMED
        key, pos = found
        pos = skip_ws(payload, pos)
        if payload.startswith(ARG_VALUE, pos):
            return pos + len(ARG_VALUE), key.strip()
        if pos == len(payload) or at_partial(payload, pos, ARG_VALUE):
            return None
        return MALFORMED

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        nl = "\n" if cls.render_newlines else ""
        out = []
        for name, arguments in calls:
            pairs = "".join(
                f"{ARG_KEY}{k}{END_ARG_KEY}{nl}{ARG_VALUE}{v}{END_ARG_VALUE}{nl}" for k, v in argument_items(arguments)
            )
            out.append(f"{cls.tool_open_tags[0]}{name}{nl}{pairs}{cls.tool_close_tag}")
        return "\n".join(out)
