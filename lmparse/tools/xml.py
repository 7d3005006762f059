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
from typing import Any, Literal, TypeVar, Union

from ..markers import MarkerSet
from ..request import ParserRequest
from .base import MORE, PAYLOAD_CLOSED, RUN, Events, Payload, PayloadStep, RunTake, ToolParser
from .calls import CallEmitter, new_call_id
from .syntax import CallSyntax, derive_call_syntax
from .xml_values import XmlValueReader, argument_items, convert_value, json_string_body

__all__ = ["XmlToolParser", "MALFORMED", "Malformed", "Found", "FunctionStep", "ArgStartStep", "ArgNameStep",
           "convert_value", "argument_items"]  # (the last two: re-exported from ``xml_values`` for the dialects)


class Verdict(enum.Enum):
    """What a hook or reader says when it has no step to give."""

    MALFORMED = "malformed"  # this is not the dialect's syntax

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "MALFORMED"


MALFORMED = Verdict.MALFORMED
Malformed = Literal[Verdict.MALFORMED]
_T = TypeVar("_T")
# A hook's or reader's answer: what it read, None (wait for more text) or MALFORMED.
Found = Union[_T, None, Malformed]  # noqa: UP007  (a generic alias: ``|`` cannot take parameters on 3.10)
# ``(position after the name, name, what follows)``; no name: the payload ends at the position.
FunctionStep = tuple[int, str | None, Literal["arg_start", "done"]]
ArgStartStep = tuple[int, Literal["arg_name", "done"]]
# ``(position of the value, key)``, optionally with the value type the syntax declares;
# ``"arguments"``: the value is the whole arguments object as JSON (the key is unused) and
# ends at ``arguments_close`` (Kimi-K3's ``<|open|>json type="object"<|sep|>`` form).
Declared = Literal["string", "json", "arguments"]
ArgNameStep = tuple[int, str] | tuple[int, str, Declared | None]

_FUNCTION, _ARG_START, _ARG_NAME, _ARG_VALUE = range(4)


class XmlToolParser(ToolParser):
    streaming = "arguments: a string value as it grows; a typed value at its close tag"
    # The value's close tag (its proper prefixes that end a chunk at a token boundary, for
    # the tokenizer checks), and the layout the value reader is built from (``XmlValueReader``).
    arg_value_close: str = ""
    arg_value_close_prefixes: tuple[str, ...] = ()
    value_newlines: bool = False
    arguments_close: str = ""  # the close tag of a value declared ``"arguments"`` (see ``ArgNameStep``)
    value_wrapper: tuple[str, str] | None = None  # ``(open, close)`` around a raw value, stripped
    # The tag that opens a parameter and the one that closes a function (a value missing its
    # close tag ends at the latter; the call syntax constraints are built from both), and the
    # XGrammar name of the parameter style.
    parameter_open: str = ""
    function_close: str = ""
    argument_style: str = ""
    # The payload ends with its first call (MiniCPM5: the router reads the layout between calls).
    one_call_per_block: bool = False

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        calls = CallEmitter(request.allowed_names, id_factory, request.max_calls)
        self._values = XmlValueReader(
            calls, self.arg_value_close, (self.function_close, self.tool_close_tag),
            value_newlines=self.value_newlines, arguments_close=self.arguments_close, wrapper=self.value_wrapper,
            parameter_open=self.parameter_open)
        self._lane_ends: MarkerSet | None = None  # what may end the streamed value (the fast lane)
        super().__init__(request, id_factory, calls)

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

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos: int = 0
        values = self._values
        while True:
            phase = self._phase
            if phase == _ARG_VALUE:
                pos = values.consume(text, pos, events, final)
                if values.reading:
                    ends = self._lane_ends = values.lane
                    return pos, MORE if ends is None else RUN
                self._phase = _ARG_START
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
                return pos, self._reject(events)
            pos = found[0]
            if phase == _FUNCTION:
                status = self._open_function(events, found[1], found[2])
            elif phase == _ARG_START:
                status = self._start_argument(events, found[1])
            elif values.open(events, found[1], found[2] if len(found) > 2 else None):
                self._phase, status = _ARG_VALUE, MORE
            else:
                status = self._reject(events)
            if status is not MORE:
                return pos, status

    def _open_function(self, events: Events, name: str | None, after: str) -> Payload:
        if name is None:
            return PAYLOAD_CLOSED  # no function follows: the payload ends here
        self._begin_call()
        if self.bare and after != "done":
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
        if self._deferred_name is not None:
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

    def take_run(self, text: str) -> RunTake | None:
        # Inside a streamed string value, a chunk that holds no head of a tag ending the value
        # (``</``: ``a <= b`` or ``List<str>`` pass) and does not end with part of one is value
        # text as it stands.
        ends = self._lane_ends
        if ends is None:
            return None
        if ends.plain_run(text):
            body = json_string_body(text)
            return len(text), self._calls.run(body), body
        # A chunk that only ends with what may begin the close tag (a line's ``\n`` before
        # ``\n</parameter>``, often the last token of a group): the text before it is value
        # text, and the rest waits for the next chunk.
        # (What is held may itself be a whole tag that a longer one begins with: not held then.)
        held = ends.held_start(text)
        if held < len(text) and (held == 0 or ends.plain_run(text[:held])) and ends.search(text, 0) is None:
            body = json_string_body(text[:held]) if held else ""
            return held, self._calls.run(body), body
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
