"""GLM-4.5 / 4.6 / 4.7 / 5: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``.

The GLM-4.5 and 4.6 templates put a newline after NAME and after each pair and start
every block on a new line (a call without arguments is ``<tool_call>NAME\n</tool_call>``);
the 4.7 template writes everything inline, blocks back to back, and a call without
arguments as ``<tool_call>NAME</tool_call>``.  Both parse the same way.  Values are
strings as written, anything else as JSON.  Every tag (``<think>`` too) is one token in
both GLM vocabularies (glm-4.5, glm-4.7-flash), so no proper prefix ends a chunk at a
token boundary.
"""

from __future__ import annotations

from typing import ClassVar, Final

import re

from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser, argument_items
from ._syntax import at_partial, key_value_hook, skip_ws
from ..._mypyc import mypyc_attr

ARG_KEY: Final = "<arg_key>"
END_ARG_KEY: Final = "</arg_key>"
ARG_VALUE: Final = "<arg_value>"
END_ARG_VALUE: Final = "</arg_value>"
_NAME_END: Final = re.compile(r"[\n<]")


# GLM-5.x: the same syntax (vLLM's glm47 parser covers it; no GLM-5 template to check against).
@mypyc_attr(allow_interpreted_subclasses=True)
class Glm47ToolParser(XmlToolParser):
    summary = "<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>"
    tool_open_tags = ("<tool_call>",)
    tool_close_tag = "</tool_call>"
    tool_close_prefixes = ()
    # Every tag is an added token (both GLM vocabularies): a spaced decoding parses alike
    # (``lmparse.tools.spaced``), values keeping only their own spaces.
    spaced_tokens: ClassVar[tuple[str, ...]] = (*tool_open_tags, ARG_KEY, END_ARG_KEY, ARG_VALUE, END_ARG_VALUE,
                                                tool_close_tag)
    arg_value_close = END_ARG_VALUE
    arg_value_close_prefixes = ()
    # Newlines in the 4.5/4.6 layout, inline in 4.7.
    render_newlines: ClassVar[bool] = False
    # The call syntax constraints are built from (lmparse.tools.syntax).
    argument_style = "glm_xml"
    parameter_open = ARG_KEY
    function_close = tool_close_tag  # a call is its own block

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        start, pos = pos, skip_ws(payload, pos)
        stop = _NAME_END.search(payload, pos)
        end = len(payload) if stop is None else stop.start()
        name = payload[pos:end].strip()
        if any(c.isspace() for c in name):
            return MALFORMED  # prose, not a function name (rejected early: never held long)
        if stop is None:
            # Even at the end of the reply a name without its terminator may be cut short,
            # where templates write one: right after the tag.  After whitespace it is prose
            # (``use <tool_call> tags``).
            return MALFORMED if final and pos > start else None
        if not name:
            return pos, None, "done"
        # A name counts once the syntax after it is confirmed: ``<tool_call> x <tool_call>`` is prose.
        after = skip_ws(payload, end)
        if payload.startswith(self.parameter_open, after):
            return end, name, "arg_start"
        if payload.startswith(self.tool_close_tag, after):
            return end, name, "done"
        if after == len(payload):
            return (end, name, "arg_start") if final else None
        return None if at_partial(payload, after, self.parameter_open, self.tool_close_tag) else MALFORMED

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        pos = skip_ws(payload, pos)
        if payload.startswith(self.parameter_open, pos):
            return pos, "arg_name"
        if payload.startswith(self.tool_close_tag, pos):
            return pos, "done"
        if pos == len(payload) or at_partial(payload, pos, self.parameter_open, self.tool_close_tag):
            return None
        return MALFORMED

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        return key_value_hook(payload, pos + len(self.parameter_open), END_ARG_KEY, ARG_VALUE)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        nl = "\n" if cls.render_newlines else ""
        out = []
        for name, arguments in calls:
            pairs = "".join(
                f"{ARG_KEY}{k}{END_ARG_KEY}{nl}{ARG_VALUE}{v}{END_ARG_VALUE}{nl}" for k, v in argument_items(arguments)
            )
            out.append(f"{cls.tool_open_tags[0]}{name}{nl}{pairs}{cls.tool_close_tag}")
        return nl.join(out)  # 4.5/4.6 start each block on a new line; 4.7 writes them back to back


@mypyc_attr(allow_interpreted_subclasses=True)
class Glm45ToolParser(Glm47ToolParser):
    """Parses exactly as GLM-4.7; renders the GLM-4.5/4.6 newline layout."""

    summary = "<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n…</tool_call>"

    render_newlines = True
    # GLM-4.5 / 4.6 start every block on a new line.
    block_lead = "\n"
    block_separator = "\n"


@mypyc_attr(allow_interpreted_subclasses=True)
class Ling3ToolParser(Glm47ToolParser):
    """Ling 3.0: parses as GLM-4.7 (whitespace between tags is layout, which the hooks skip);
    its template puts a newline after NAME, between ``</arg_key>`` and ``<arg_value>`` and
    before ``</tool_call>``, and between blocks."""

    summary = "<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>…\\n</tool_call>"
    # Where the parameters end, for the call syntax constraints are derived from (the parser
    # itself skips the newline as layout).
    function_close = "\n" + Glm47ToolParser.tool_close_tag
    block_lead = "\n"
    block_separator = "\n"

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "\n".join(
            f"{cls.tool_open_tags[0]}{name}\n"
            + "".join(f"{ARG_KEY}{k}{END_ARG_KEY}\n{ARG_VALUE}{v}{END_ARG_VALUE}" for k, v in argument_items(arguments))
            + cls.function_close
            for name, arguments in calls
        )


@mypyc_attr(allow_interpreted_subclasses=True)
class IquestToolParser(Glm47ToolParser):
    """IQuest-Q1: GLM-4.7's inline pairs under ``<iquest_tool_call>``, no whitespace anywhere,
    calls back to back right after the content (bellwether's rendering, PROTOCOLS.md).  Every
    tag is one token of its vocabulary (ids 33-38), so no proper prefix ends a chunk."""

    summary = "<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</iquest_tool_call>"
    tool_open_tags = ("<iquest_tool_call>",)
    tool_close_tag = "</iquest_tool_call>"
    function_close = tool_close_tag
    spaced_tokens: ClassVar[tuple[str, ...]] = (*tool_open_tags, ARG_KEY, END_ARG_KEY, ARG_VALUE, END_ARG_VALUE,
                                                tool_close_tag)


@mypyc_attr(allow_interpreted_subclasses=True)
class IquestCoderV2ToolParser(Glm47ToolParser):
    """IQuest-Coder V2 (vLLM ``iquest_coder_v2``): GLM-4.7's pairs under ``<iquestcoder_tool_call>``;
    newlines around the tags are layout (the hooks skip them).  No template is known, so all
    whitespace between two blocks is theirs."""

    summary = "<iquestcoder_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</iquestcoder_tool_call>"
    tool_open_tags = ("<iquestcoder_tool_call>",)
    tool_close_tag = "</iquestcoder_tool_call>"
    function_close = tool_close_tag
    spaced_tokens = ()  # no vocabulary here says its block tags are single tokens
    block_separator = None
