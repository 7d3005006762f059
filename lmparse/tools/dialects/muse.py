"""Muse Spark / Muse Glimmer ("ATEM"): each message is ``<|start|>assistant to=RECIPIENT<|message|>BODY``
ended by ``<|eom|>`` (more follow) or ``<|eot|>``.  A tool recipient's body is the call::

     to=NAME<|message|><atem:function_calls>\\n<atem:invoke name="NAME">\\n
    <atem:parameter name="K">V</atem:parameter>\\n</atem:invoke>\\n</atem:function_calls>

The generation prompt ends in ``<|start|>assistant``, so a block opens at `` to=`` (the header's
space is the block's).  The recipient is read up to ``<|message|>`` and must be a name (``to=5``
in prose is text); the call's name is the ``invoke``'s.  V is raw text (strings verbatim,
everything else as JSON), typed only by the schema.  ``self`` (reasoning) and ``user`` /
``commentary`` (content) headers are the reasoning parser's open tag and framing, which the
router finds before `` to=``.  The ATEM tags are several tokens each (bellwether
``muse-glimmer-30b``): ``</atem:parameter>`` is ``</``, ``atem``, ``:``, ``parameter``, ``>``.
"""

from __future__ import annotations

from ...markers import WHITESPACE
from ..base import MORE, Events, PayloadStep
from ..syntax import CallSyntax
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, XmlToolParser, argument_items
from ._syntax import arg_start_hook, at_partial, function_hook, read_attribute, read_until, skip_ws
from ..._mypyc import mypyc_attr

START = "<|start|>assistant"
MESSAGE = "<|message|>"
END_OF_MESSAGE = "<|eom|>"
END_OF_TURN = "<|eot|>"
HEADER = " to="
REASONING_HEADER = f"{HEADER}self{MESSAGE}"
OPEN = "<atem:function_calls>"
CLOSE = "</atem:function_calls>"
INVOKE = "<atem:invoke name="
END_INVOKE = "</atem:invoke>"
PARAMETER = "<atem:parameter name="
END_PARAMETER = "</atem:parameter>"
# Framing that is neither content nor a call: message ends, the next message's start, a
# bare header (Glimmer reads its body as content) and the content recipients' headers.
FRAMING = (END_OF_MESSAGE, END_OF_TURN, START, START + MESSAGE, f"{HEADER}user{MESSAGE}",
           f"{HEADER}commentary{MESSAGE}")
_NOT_RECIPIENT = WHITESPACE + "<>\"'=,;()[]{}"
_NOT_TOOLS = frozenset(("self", "user", "commentary", "developer"))
_RECIPIENT_LIMIT = 128  # a longer run after `` to=`` is prose


def read_header(text: str) -> Found[int]:
    """``RECIPIENT<|message|>`` then ``<atem:function_calls>`` at the start of ``text``: the
    position after them, None (not all here), or MALFORMED (prose, or not a tool's message)."""
    found = read_until(text, 0, MESSAGE, forbidden=_NOT_RECIPIENT)
    if found is None:  # a recipient so far (a cut-off one is a call cut off), unless it runs on
        return MALFORMED if len(text) > _RECIPIENT_LIMIT or text[:1].isdigit() else None
    if not found:
        return found
    recipient, pos = found
    if not recipient or not (recipient[0].isalpha() or recipient[0] == "_") or recipient in _NOT_TOOLS:
        return MALFORMED
    pos = skip_ws(text, pos)
    if text.startswith(OPEN, pos):
        return pos + len(OPEN)
    return None if pos == len(text) or at_partial(text, pos, OPEN) else MALFORMED


@mypyc_attr(allow_interpreted_subclasses=True)
class MuseToolParser(XmlToolParser):
    summary = ' to=N<|message|><atem:function_calls>\\n<atem:invoke name="N">\\n<atem:parameter name="K">V…'
    tool_open_tags = (HEADER,)
    tool_close_tag = CLOSE
    arg_value_close = END_PARAMETER
    arg_value_close_prefixes = ("</atem:parameter", "</atem:", "</atem", "</")
    parameter_open = PARAMETER
    function_close = END_INVOKE
    # Between calls the template writes ``<|eom|><|start|>assistant`` (framing), no whitespace.
    block_lead = ""
    block_separator = ""
    template_markers = (OPEN, INVOKE, END_PARAMETER, MESSAGE)
    framing_markers = FRAMING

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        """None (``tool_choice="required"`` is refused): the name is written twice, in the
        header and in the invoke, which ``CallSyntax`` cannot spell."""
        return None

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._in_body = False  # the header was read: the XML driver has the rest

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        if self._in_body:
            return super()._consume_stream_payload(text, events, final=final)
        found = read_header(text)
        if found is None:
            return 0, MORE
        if found is MALFORMED:
            return 0, self._reject(events)
        self._in_body = True
        pos, status = super()._consume_stream_payload(text[found:], events, final=final)
        return found + pos, status

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        found = function_hook(payload, pos, INVOKE, read_attribute)
        if not found or found[1] is None:
            return found
        return found[0], self._registered(found[1]), found[2]

    def _registered(self, name: str) -> str:
        """vLLM's binding: a doubled ``get_weather.get_weather`` is the offered ``get_weather``."""
        head, dot, leaf = name.partition(".")
        tools = self.request.tools
        return leaf if dot and head == leaf and name not in tools and leaf in tools else name

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, PARAMETER, END_INVOKE, CLOSE)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = read_attribute(payload, pos + len(PARAMETER))
        return (found[1], found[0].strip()) if found else found

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """One tool message per call, as the template writes them after ``<|start|>assistant``."""
        return f"{END_OF_MESSAGE}{START}".join(
            f'{HEADER}{name}{MESSAGE}{OPEN}\n{INVOKE}"{name}">\n'
            + "".join(f'{PARAMETER}"{key}">{value}{END_PARAMETER}\n' for key, value in argument_items(arguments))
            + f"{END_INVOKE}\n{CLOSE}"
            for name, arguments in calls)

    @classmethod
    def render_content(cls, content: str) -> str:
        """Content before calls is a ``to=user`` message of its own (PROTOCOLS.md, llama.cpp's
        "inform then act" test); the call messages follow the next ``<|start|>assistant``."""
        return f"{HEADER}user{MESSAGE}{content}{END_OF_MESSAGE}{START}"
