"""MiniMax-M3: namespaced XML, every structural tag prefixed with NS = ``]<]minimax[>[``.

Wire syntax (``MiniMax-M3.jinja``), all calls of a turn in one block::

    NS<tool_call>\\n
    NS<invoke name="get_weather">NS<city>Paris NS</city>NS<opts>NS<unit>c NS</unit>NS</opts>NS</invoke>\\n
    NS</tool_call>

(without the spaces before ``NS</…>``).  A parameter is ``NS<KEY>VALUE NS</KEY>``; VALUE is
raw text (``<`` and newlines are data) or nested elements: an object one ``NS<CHILD>`` per
key, an array one ``NS<item>`` per element.  Null members are omitted; the template writes
no whitespace between parameters.  Reused machinery: ``lmparse.tools.element_values``
(``ElementTranslator``, shared with any prefixed-element grammar) reads the arguments and
writes them through ``value_grammar.JsonWriter``, typing by the schema with
``xml.convert_value`` as the other XML dialects; ``_syntax.read_attribute`` reads the
name (``"X"``, ``'X'`` or bare, vLLM's variants).  A string value streams as it grows; a
typed scalar or an empty element is written at its closer.  No call ids.

Variants: whitespace between NS and its tag (``NS <invoke name="f">``, SGLang normalizes it)
is layout everywhere, the block's opener included.  A malformed call (an invoke with an
empty name, text where a parameter belongs) is skipped to its ``NS</invoke>`` and recorded
in ``dropped`` (``lmparse.tools.recovery``, issue 23 rule 2): what streamed of it stands,
and the calls after it still parse; a block of malformed calls only is text.  Markup left
over where no invoke closes it (a garbled invoke) up to the block's closer is recorded in
``dropped`` with the block, never lost silently.

Tokens (unverified: no MiniMax-M3 tokenizer here): NS, ``<tool_call>``, ``</tool_call>``
are single non-special entries per vLLM, but generated text may split them anywhere: the
parser matches text and holds any partial prefix.  There is no call syntax for
constraints: a parameter's closer repeats its own key, which ``CallSyntax`` cannot say.
"""

from __future__ import annotations

from typing import Final

import json

from ..base import MORE, PAYLOAD_CLOSED, Events, Payload, PayloadStep, ToolParser
from ..element_values import ElementTranslator, render_elements
from ..recovery import SKIP_LIMIT, SkippedCalls, find_call_end
from ._syntax import at_partial, read_attribute, skip_ws
from ..._mypyc import mypyc_attr

NS: Final = "]<]minimax[>["
OPEN: Final = NS + "<tool_call>"
CLOSE: Final = NS + "</tool_call>"
INVOKE: Final = NS + "<invoke name="
END_INVOKE: Final = NS + "</invoke>"
BROKEN: Final = "a broken call's markup, up to the block's closer"


def ns_tag(text: str, pos: int, tag: str) -> int | None:
    """NS, optional whitespace, then ``tag`` at ``pos``: the index after it; None while the
    text may still become it; -1 when it is not it."""
    if not text.startswith(NS, pos):
        return None if at_partial(text, pos, NS) else -1
    at = skip_ws(text, pos + len(NS))
    if text.startswith(tag, at):
        return at + len(tag)
    return None if at == len(text) or at_partial(text, at, tag) else -1


@mypyc_attr(allow_interpreted_subclasses=True)
class MiniMaxM3ToolParser(ToolParser):
    tool_open_tags = (OPEN, f"{NS} <tool_call>", f"{NS}\n<tool_call>")
    tool_close_tag = CLOSE
    tool_close_prefixes = ()  # unverified (no tokenizer): a split anywhere is held
    summary = f'{NS}<tool_call>\\n{NS}<invoke name="N">{NS}<K>V{NS}</K>…{NS}</invoke>\\n{NS}</tool_call>'
    streaming = "arguments: a string value as it grows; a typed scalar or empty element at its closer"
    # The template builds its tags from the namespace variable: the pieces are what it contains.
    template_markers = (NS, "<tool_call>", "</tool_call>", '<invoke name="', "</invoke>")

    def _reset_payload(self) -> None:
        self._args: ElementTranslator | None = None
        self._skipping = False  # a malformed call is being skipped: from ``_skip_from``, searched to ``_skip_seen``
        self._skip_from = self._skip_seen = 0
        self._skipped = SkippedCalls()

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos = 0
        while True:
            if self._skipping:
                pos, skipped = self._skip(text, events, final)
                if skipped is not None:
                    return pos, skipped
                continue
            args = self._args
            if args is None:
                found = self._consume_invoke(text, pos, events)
                if found is None:
                    return len(text) if final and self.committed else pos, MORE
                pos, status = found
                if status is not MORE:
                    return pos, status
                continue
            pos = args.feed(text, pos, final)
            if args.broken:
                args.close()
            self._calls.arguments(events, args.writer.take())
            self._calls.value_end(events)  # (the writer writes a typed scalar whole, at its closer)
            if args.broken:  # text where a parameter belongs: the call ends with what it had, the rest is skipped
                self._end_call(events)
                self._args, self._skipping, self._skip_from, self._skip_seen = None, True, pos, pos
                continue
            if not args.done:
                return len(text) if final else pos, MORE  # at the end, a cut-off tag is the call's own markup
            self._end_call(events)
            self._args = None

    def _consume_invoke(self, text: str, pos: int, events: Events) -> PayloadStep | None:
        """``NS<invoke name="N">`` opens a call (``MORE``: its arguments follow); the block's
        closer (or anything else after a call) ends the payload.  None: wait for more text."""
        at = skip_ws(text, pos)
        head = ns_tag(text, at, "<invoke name=")
        if head is None:
            return None
        if head > 0:
            found = read_attribute(text, head)
            if found is None:
                return None
            name = found[0].strip() if found else ""
            if not found:
                return pos, self._reject(events)
            if not name:  # an invoke with an empty name: skipped
                self._skipping, self._skip_from, self._skip_seen = True, pos, pos
                return pos, MORE
            self._skipped.commit(self, events)
            self._begin_call()
            self._emit_name(events, name)
            schema = self.request.schema_for(name) if self.request.tools else None
            self._args = ElementTranslator(NS, schema, root="invoke", outer=("tool_call",), stops=("invoke ",))
            return found[1], MORE
        if at == len(text) or ns_tag(text, at, "</tool_call>") is None:
            return None
        if self.committed:
            return pos, PAYLOAD_CLOSED  # the close tag (or stray text) is the block's business
        return pos, self._reject(events)

    def _skip(self, text: str, events: Events, final: bool) -> tuple[int, Payload | None]:
        """A malformed call, from ``_skip_from`` up to and with its ``NS</invoke>``: dropped
        (None: the next invoke is read there); the block's closer first ends the payload there.
        Neither within ``SKIP_LIMIT`` characters (or by the end of the reply): the payload
        ends where the call began, as it did before recovery."""
        start = self._skip_from
        scan = max(start, self._skip_seen - len(END_INVOKE) - len(CLOSE))  # a tag may straddle what was seen
        found = find_call_end(text, scan, start + SKIP_LIMIT, END_INVOKE, CLOSE)
        if found is None:
            if final or len(text) > start + SKIP_LIMIT:
                self._skipping = False
                return start, self._reject(events)
            self._skip_from, self._skip_seen = 0, len(text) - start  # the next text starts at ``start``
            return start, MORE
        end, at_close = found
        self._skipping = False
        self._skipped.skip(self, events, text[start:end])
        if at_close:
            return end, None
        return (end, PAYLOAD_CLOSED) if self.committed else (start, self._reject(events))

    def _consume_close(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, bool]:
        at = skip_ws(text, pos)
        end = ns_tag(text, at, "</tool_call>")
        if end is not None and end > 0:
            return end, True
        if end is None and not final:
            return pos, False
        found, closed = super()._consume_close(text, pos, events, final)
        stray = text[pos:found].strip()
        if stray.endswith(CLOSE):
            stray = stray[:-len(CLOSE)].rstrip()
        if stray:
            self._calls.cut(events, stray, BROKEN)  # dropped with the block, and recorded
        return found, closed

    def _finish_payload(self, events: Events) -> Payload:
        args = self._args
        if args is not None:
            args.close()
            self._calls.arguments(events, args.writer.take())
        return super()._finish_payload(events)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        if not calls:
            return ""
        invokes = "".join(f'{INVOKE}"{name}">{render_elements(json.loads(arguments), NS)}{END_INVOKE}\n'
                          for name, arguments in calls)
        return f"{OPEN}\n{invokes}{CLOSE}"
