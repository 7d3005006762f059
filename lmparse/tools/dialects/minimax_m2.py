"""MiniMax-M2.x: ``<invoke>`` elements inside ``<minimax:tool_call>`` ... ``</minimax:tool_call>``.

The official template writes all calls of a turn in one block::

    \\n<minimax:tool_call>\\n<invoke name="NAME">\\n<parameter name="K">V</parameter>\\n...</invoke>
    \\n...</minimax:tool_call>

V sits directly between its tags: strings raw (newlines and all), everything else as
JSON (``tojson``).  A call without arguments is ``<invoke name="NAME">\\n</invoke>``.

Tokenization (minimax-m2 vocabulary): both outer tags are single tokens;
``<invoke name="`` is ``<``, ``invoke``, `` name``, ``="`` (a leading space or newline
may join the ``<``); ``</parameter>`` is ``</``, ``parameter``, ``>`` and ``</invoke>``
is ``</``, ``invoke``, ``>``, where ``</`` may absorb the character before it.
"""

from __future__ import annotations

from ..xml import ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser, argument_items
from ._syntax import arg_start_hook, function_hook, read_attribute
from ..._mypyc import mypyc_attr

OPEN = "<minimax:tool_call>"
CLOSE = "</minimax:tool_call>"
INVOKE = "<invoke name="
END_INVOKE = "</invoke>"
PARAMETER = "<parameter name="
END_PARAMETER = "</parameter>"


@mypyc_attr(allow_interpreted_subclasses=True)
class MiniMaxM2ToolParser(XmlToolParser):
    summary = '<minimax:tool_call>\\n<invoke name="N">\\n<parameter name="K">V</parameter>\\n</invoke>…'
    tool_open_tags = (OPEN,)
    tool_close_tag = CLOSE
    tool_close_prefixes = ()
    spaced_tokens = (OPEN, CLOSE)  # added tokens: a spaced decoding parses alike (``lmparse.tools.spaced``)
    arg_value_close = END_PARAMETER
    arg_value_close_prefixes = ("</parameter", "</")
    # The call syntax constraints are built from (lmparse.tools.syntax).
    argument_style = "minimax_xml"
    parameter_open = PARAMETER
    function_close = END_INVOKE
    # The template writes "\n<minimax:tool_call>" after the content, one block per turn: a
    # block after a block gets the same newline.
    block_lead = "\n"
    block_separator = "\n"

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        return function_hook(payload, pos, INVOKE, read_attribute)

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, self.parameter_open, self.function_close, self.tool_close_tag or "")

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = read_attribute(payload, pos + len(self.parameter_open))
        if not found:
            return found
        return found[1], found[0].strip()

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        invokes = "".join(
            f'{INVOKE}"{name}">\n'
            + "".join(f'{PARAMETER}"{key}">{value}{END_PARAMETER}\n' for key, value in argument_items(arguments))
            + f"{END_INVOKE}\n"
            for name, arguments in calls
        )
        return f"{cls.tool_open_tags[0]}\n{invokes}{cls.tool_close_tag}" if calls else ""


DOTS_OPEN = "<dots_function_call>"
DOTS_CLOSE = "</dots_function_call>"


@mypyc_attr(allow_interpreted_subclasses=True)
class DotsToolParser(MiniMaxM2ToolParser):
    """dots / dots3: MiniMax-M2's ``<invoke>`` elements under ``<dots_function_call>``, each value
    framed by one newline on either side (as Qwen3-Coder's), one invoke per block::

        Let me check.\\n<dots_function_call>\\n<invoke name="N">\\n<parameter name="K">\\nV\\n</parameter>\\n
        </invoke>\\n</dots_function_call>

    Blocks are separated by a newline, and a newline comes before the first block after text
    (a reply with no text starts with it).  A block holding several invokes (vLLM ``dots``
    accepts them) parses as MiniMax-M2's does.  Tokens (bellwether's recorded pieces, Qwen2
    vocabulary): both outer tags are single special tokens; ``<invoke``/``<parameter`` are
    several tokens, ``">\\n`` and ``>\\n`` fuse."""

    summary = '<dots_function_call>\\n<invoke name="N">\\n<parameter name="K">\\nV\\n</parameter>\\n</invoke>\\n…'
    tool_open_tags = (DOTS_OPEN,)
    tool_close_tag = DOTS_CLOSE
    spaced_tokens = (DOTS_OPEN, DOTS_CLOSE)
    value_newlines = True
    block_lead = "\n"
    block_separator = "\n"

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        return "\n".join(
            f'{DOTS_OPEN}\n{INVOKE}"{name}">\n'
            + "".join(f'{PARAMETER}"{key}">\n{value}\n{END_PARAMETER}\n' for key, value in argument_items(arguments))
            + f"{END_INVOKE}\n{DOTS_CLOSE}"
            for name, arguments in calls
        )
