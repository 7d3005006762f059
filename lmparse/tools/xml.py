"""XmlToolParser: the shared driver for function-first formats whose argument values
end at a closing tag (Qwen3-Coder, GLM-4.5/4.7, MiniMax-M2, Seed-OSS, DSML).

The driver alone owns the parse state (``function -> arg_start -> arg_name ->
arg_value -> arg_start ... -> done``).  A dialect implements three pure hooks that
recognize its syntax at a position and return a step (``FunctionStep``,
``ArgStartStep``, ``ArgNameStep``), ``None`` (the suffix is incomplete: wait for more
text) or ``MALFORMED`` (not this syntax); it never touches the state.  ``MALFORMED`` is
falsy like ``None``, so ``if not found: return found`` passes either verdict on, and the
small readers in ``dialects/_syntax.py`` answer the same way.  The driver holds an
``XmlValueReader`` (``lmparse.tools.xml_values``), which reads each value and writes the
JSON arguments object as it goes: unquoted strings stream as soon as their type is known,
while quoted values and schema-typed non-strings wait for their closing tag and are
converted then.  A dialect is data (its markers and layout) plus the three hooks.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar, Final, Literal, TypeVar, Union

from ..markers import MarkerSet
from ..request import ParserRequest
from .base import MORE, PAYLOAD_CLOSED, RUN, Events, Payload, PayloadStep, RunTake, ToolParser
from .calls import CallEmitter, new_call_id
from .recovery import MALFORMED_CALL, SKIP_LIMIT, SkippedCalls, find_call_end
from .syntax import CallSyntax, derive_call_syntax
from .xml_values import Typed, XmlValueReader, argument_items, convert_value, json_string_body
from .._mypyc import mypyc_attr

__all__ = ["XmlToolParser", "MALFORMED", "Malformed", "Found", "FunctionStep", "ArgStartStep", "ArgNameStep",
           "MALFORMED_CALL", "Typed", "convert_value", "argument_items"]  # (re-exported: the last four)


class Verdict(enum.Enum):
    """What a hook or reader says when it has no step to give."""

    MALFORMED = "malformed"  # this is not the dialect's syntax

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "MALFORMED"


MALFORMED: Final = Verdict.MALFORMED
Malformed = Literal[Verdict.MALFORMED]
_T = TypeVar("_T")
# A hook's or reader's answer: what it read, None (wait for more text) or MALFORMED.
Found = Union[_T, None, Malformed]  # noqa: UP007  (a generic alias: ``|`` cannot take parameters on 3.10)
# ``(position after the name, name, what follows)``; no name: the payload ends at the position.
FunctionStep = tuple[int, str | None, Literal["arg_start", "done"]]
ArgStartStep = tuple[int, Literal["arg_name", "done"]]
# ``(position of the value, key)``, optionally with the value type the syntax declares;
# ``"arguments"``: the value is the whole arguments object as JSON (the key is unused) and
# ends at ``arguments_close`` (Kimi-K3's ``<|open|>json type="object"<|sep|>`` form); a
# ``Typed`` value: the type the syntax writes, converted with the schema (K2 Horizon).
Declared = Literal["string", "json", "arguments"]
ArgNameStep = tuple[int, str] | tuple[int, str, Declared | Typed | None]

_FUNCTION: Final = 0
_ARG_START: Final = 1
_ARG_NAME: Final = 2
_ARG_VALUE: Final = 3
_SKIP: Final = 4


@mypyc_attr(allow_interpreted_subclasses=True)
class XmlToolParser(ToolParser):
    streaming = "arguments: a string value as it grows; a typed value at its close tag"
    # The value's close tag (its proper prefixes that end a chunk at a token boundary, for
    # the tokenizer checks), and the layout the value reader is built from (``XmlValueReader``).
    arg_value_close: ClassVar[str] = ""
    arg_value_close_prefixes: ClassVar[tuple[str, ...]] = ()
    value_newlines: ClassVar[bool] = False
    arguments_close: ClassVar[str] = ""  # the close tag of a value declared ``"arguments"`` (see ``ArgNameStep``)
    value_wrapper: ClassVar[tuple[str, str] | None] = None  # ``(open, close)`` around a raw value, stripped
    # The tag that opens a parameter and the one that closes a function (a value missing its
    # close tag ends at the latter; the call syntax constraints are built from both), and the
    # XGrammar name of the parameter style.
    parameter_open: ClassVar[str] = ""
    function_close: ClassVar[str] = ""
    argument_style: ClassVar[str] = ""
    # The payload ends with its first call (MiniCPM5: the router reads the layout between calls).
    one_call_per_block: ClassVar[bool] = False
    # A call in a block with no open tag (a payload open tag) commits only at its function's
    # close tag and with a name the request offers; else it is text (DSML's orphan invoke).
    bare_call_waits_for_close: ClassVar[bool] = False

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        calls = CallEmitter(request.allowed_names, id_factory, request.max_calls)
        self._values = self._value_reader(calls)
        self._lane_ends: MarkerSet | None = None  # what may end the streamed value (the fast lane)
        super().__init__(request, id_factory, calls)

    def _value_reader(self, calls: CallEmitter) -> XmlValueReader:
        """The value reader for this parser's tags (built again by a dialect whose block's
        open tag chooses its tags: Hunyuan's suffixed or plain)."""
        return XmlValueReader(
            calls, self.arg_value_close, (self.function_close, self.tool_close_tag),
            value_newlines=self.value_newlines, arguments_close=self.arguments_close, wrapper=self.value_wrapper,
            parameter_open=self.parameter_open)

    @classmethod
    def call_syntax(cls) -> CallSyntax | None:
        return derive_call_syntax(cls, cls.argument_style) if cls.argument_style else None

    # ---- the three dialect hooks ------------------------------------------------------

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        """A function opens (its name, then arguments or its end), or no function follows."""
        raise NotImplementedError

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        """A parameter opens, or the function ends."""
        raise NotImplementedError

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        """A parameter's key: the value starts at the position returned."""
        raise NotImplementedError

    # ---- the driver ---------------------------------------------------------------------

    def _reset_payload(self) -> None:
        self._phase = _FUNCTION
        self._deferred_name: str | None = None
        self._values.reset()
        self._skip_from = self._skip_seen = 0  # the malformed call being skipped: its start, how far it was searched
        self._skipped = SkippedCalls()  # malformed calls skipped before the block committed: recorded once it does

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos: int = 0
        values = self._values
        while True:
            phase = self._phase
            if phase == _ARG_VALUE:
                pos = values.consume(text, pos, events, final)
                if values.reading:
                    # (No fast lane while the name waits: the emitter holds the value text.)
                    ends = self._lane_ends = values.lane if self._deferred_name is None else None
                    return pos, MORE if ends is None else RUN
                self._phase = _ARG_START
                continue
            if phase == _SKIP:
                pos, status = self._skip(text, events, final)
                if status is not MORE or self._phase == _SKIP:  # (still skipping: wait for more text)
                    return pos, status
                continue
            # Each phase's hook has its own step type (see the hooks); ``found`` holds any of them.
            found: Any
            if phase == _FUNCTION:
                found = self._consume_function(text, pos, final)
            elif phase == _ARG_START:
                found = self._consume_arg_start(text, pos)
            else:
                found = self._consume_arg_name(text, pos)
            if found is None:
                # At the end of input, a committed block's cut-off markup is its own syntax.
                return len(text) if final and self.committed else pos, MORE
            if found is MALFORMED:
                status = self._malformed(events, pos)
                if status is MORE:
                    continue
                return pos, status
            at, pos = pos, found[0]
            if phase == _FUNCTION:
                status = self._open_function(events, found[1], found[2])
            elif phase == _ARG_START:
                status = self._start_argument(events, found[1])
            elif values.open(events, found[1], found[2] if len(found) > 2 else None):
                self._phase, status = _ARG_VALUE, MORE
            else:
                status = self._malformed(events, at)
                if status is MORE:
                    pos = at  # the key is part of the call skipped
            if status is not MORE:
                return pos, status

    def _open_function(self, events: Events, name: str | None, after: str) -> Payload:
        if name is None:
            return PAYLOAD_CLOSED  # no function follows: the payload ends here
        offered = self.request.allowed_names
        if self.bare and self.bare_call_waits_for_close and offered is not None and name not in offered:
            return self._reject(events)  # an orphan call to a tool not offered is text
        self._skipped.commit(self, events)
        self._begin_call()
        if self.bare and (after != "done" or self.bare_call_waits_for_close):
            self._deferred_name = name  # a block with no open tag proves itself first
        else:
            self._emit_name(events, name)
        schema = self.request.schema_for(name) if self.request.tools else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        self._values.begin_call(props if isinstance(props, dict) else {}, schema)
        if after == "done":
            return self._close_arguments(events)
        self._phase = _ARG_START
        return MORE

    def _start_argument(self, events: Events, what: str) -> Payload:
        if self._deferred_name is not None and (what == "done" or not self.bare_call_waits_for_close):
            self._emit_name(events, self._deferred_name)
            self._deferred_name = None
        if what == "done":
            return self._close_arguments(events)
        self._phase = _ARG_NAME
        return MORE

    def _close_arguments(self, events: Events) -> Payload:
        """The call's arguments object ends, and the call: the payload goes on to the next
        function (``MORE``), or ends with it (``PAYLOAD_CLOSED``) with ``one_call_per_block``."""
        self._values.close_arguments(events)
        self._end_call(events)
        self._phase = _FUNCTION
        return PAYLOAD_CLOSED if self.one_call_per_block else MORE

    def _malformed(self, events: Events, at: int) -> Payload:
        """A hook found no syntax of the dialect at ``at``.  In a block whose calls end with a
        tag of their own (``function_close``, not the block's), that call is skipped to its
        close tag and recorded in ``dropped`` (``lmparse.tools.recovery``: once the block holds
        a call, so a block of malformed calls only is text), and the calls around it still
        parse: ``MORE``, in the skip phase.  A block with no open tag or no close tag (an
        orphan invoke, MiniCPM5's calls) skips only once a named call proved it.  Otherwise
        the block is rejected (``_reject``) as before."""
        close, block_close = self.function_close, self.tool_close_tag
        unbounded = self.bare or not block_close
        if not close or (block_close and block_close in close) or (unbounded and not self.committed):
            return self._reject(events)
        if self.call_named:
            self._close_arguments(events)  # what streamed of the call stands; its object is closed
        elif self.in_call:
            self._end_call(events)
        self._phase, self._skip_from, self._skip_seen = _SKIP, at, at
        return MORE

    def _skip(self, text: str, events: Events, final: bool) -> PayloadStep:
        """The skip phase: up to and with the function's close tag the markup is dropped, and
        the next call is read; the block's close tag first ends the payload there.  Neither
        within ``SKIP_LIMIT`` characters (or by the end of the reply): the block ends where
        the malformed call began, as a malformed block always did."""
        start, close, block_close = self._skip_from, self.function_close, self.tool_close_tag
        scan = max(start, self._skip_seen - len(close) - len(block_close or ""))  # a tag may straddle what was seen
        limit = start + SKIP_LIMIT
        found = find_call_end(text, scan, limit, close, block_close)
        if found is None:
            if final or len(text) > limit:
                self._phase = _FUNCTION
                return start, self._reject(events)
            self._skip_from, self._skip_seen = 0, len(text) - start  # the next text starts at ``start``
            return start, MORE
        end, at_close = found
        self._skipped.skip(self, events, text[start:end])
        self._phase = _FUNCTION
        if at_close:
            return end, PAYLOAD_CLOSED if self.one_call_per_block else MORE
        if self.committed:
            return end, PAYLOAD_CLOSED  # the block's close tag is the driver's
        return start, self._reject(events)

    def take_run(self, text: str) -> RunTake | None:
        # Inside a streamed string value, a chunk that holds no head of a tag ending the value
        # (``</``: ``a <= b`` or ``List<str>`` pass) and does not end with part of one is value
        # text as it stands.
        ends = self._lane_ends
        if ends is None:
            return None
        if ends.plain_run(text):
            body = json_string_body(text)
            index = self._calls.string_run(body)
            return None if index is None else (len(text), index, body)
        # A chunk that only ends with what may begin the close tag (a line's ``\n`` before
        # ``\n</parameter>``, often the last token of a group): the text before it is value
        # text, and the rest waits for the next chunk.
        # (What is held may itself be a whole tag that a longer one begins with: not held then.)
        held = ends.held_start(text)
        if held < len(text) and (held == 0 or ends.plain_run(text[:held])) and ends.search(text, 0) is None:
            body = json_string_body(text[:held]) if held else ""
            index = self._calls.string_run(body)
            return None if index is None else (held, index, body)
        return None

    def _finish_payload(self, events: Events) -> Payload:
        if self._phase == _ARG_VALUE:
            self._values.finish(events)
        if self.call_named:
            self._close_arguments(events)
            return PAYLOAD_CLOSED
        return super()._finish_payload(events)

    def _reject(self, events: Events) -> Payload:
        if self.committed and self.call_named:
            self._close_arguments(events)  # malformed after a named call: its object is still closed
        return super()._reject(events)
