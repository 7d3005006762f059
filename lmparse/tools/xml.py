"""XmlToolParser: the shared driver for function-first formats whose argument values
end at a closing tag (Qwen3-Coder, GLM-4.5/4.7, MiniMax-M2, Seed-OSS, DSML).

The driver alone owns the parse state (``function -> arg_start -> arg_name ->
arg_value -> arg_start ... -> done``).  A dialect implements three pure hooks that
recognize its syntax at a position and return a step (``FunctionStep``,
``ArgStartStep``, ``ArgNameStep``), ``None`` (the suffix is incomplete: wait for more
text) or ``MALFORMED`` (not this syntax); it never touches the state.  ``MALFORMED`` is
falsy like ``None``, so ``if not found: return found`` passes either verdict on, and the
small readers in ``dialects/_syntax.py`` answer the same way.  The driver consumes
values and writes the JSON arguments object as it goes: unquoted strings stream as soon
as their type is known, while quoted values and schema-typed non-strings wait for their
closing tag and are converted then.
"""

from __future__ import annotations

import ast
import enum
import json
import re
from json.encoder import encode_basestring, encode_basestring_ascii
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union

from ..markers import WHITESPACE, MarkerSet
from ..request import ParserRequest
from ..schema import canonical_type, schema_type
from .base import MORE, PAYLOAD_CLOSED, RUN, RUN_STEPS, BlockStep, Deltas, Payload, PayloadStep, ToolParser, run_step
from .calls import new_call_id
from .json_scanner import JsonValueScanner
from .syntax import CallSyntax, derive_call_syntax

__all__ = ["XmlToolParser", "MALFORMED", "Malformed", "Found", "FunctionStep", "ArgStartStep", "ArgNameStep",
           "schema_type", "convert_value", "argument_items"]


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
# How a value is carried into the arguments object.
_STREAM, _BUFFER, _JSON = range(3)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")

# How far past an enclosing close tag met inside a value the value's own close tag is looked for.
_LOOKAHEAD = 256


def convert_value(raw: str, kind: str | None) -> str:
    """JSON source for a complete value of a schema type (any name ``canonical_type``
    knows: ``int``, ``double``, ``dict``...); what does not convert stays a string."""
    kind = canonical_type(kind) or kind
    text = raw.strip()
    if kind == "integer":
        if re.fullmatch(r"[-+]?\d+", text):
            return str(int(text))
    elif kind == "number":
        if _JSON_NUMBER.fullmatch(text):
            return text
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if number == number and number not in (float("inf"), float("-inf")):
                return json.dumps(int(number) if number.is_integer() and "." not in text else number)
    elif kind == "boolean":
        if text.lower() in ("true", "false"):
            return text.lower()
    elif kind == "null":
        if text.lower() in ("null", "none"):
            return "null"
    elif kind == "json":  # declared JSON with no schema type: a JSON scalar as written
        if _JSON_NUMBER.fullmatch(text) or text in ("true", "false", "null"):
            return text
    elif kind in ("array", "object"):
        wanted = list if kind == "array" else dict
        for load in (json.loads, ast.literal_eval):
            try:
                value = load(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, wanted):
                try:
                    return json.dumps(value, ensure_ascii=False)
                except (TypeError, ValueError):
                    break
    if kind not in (None, "string") and text in ("null", "None"):
        return "null"  # an optional typed value, written null (JSON templates) or None (Python str)
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(value, str):
                return encode_basestring(value)
    return encode_basestring(raw)


def argument_items(arguments: str) -> list[tuple[str, str]]:
    """``(key, value text)`` pairs of a JSON arguments object, values written as chat
    templates write them: strings raw, everything else as JSON (for the renderers)."""
    return [
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in json.loads(arguments).items()
    ]


def json_string_body(text: str) -> str:
    """``text`` as the inside of a JSON string, non-ASCII characters kept (``ensure_ascii=False``).
    ASCII text takes CPython's ASCII encoder, the same bytes about four times faster; DEL
    (which only that one escapes) keeps the general encoder."""
    if text.isascii() and "\x7f" not in text:
        return encode_basestring_ascii(text)[1:-1]
    return encode_basestring(text)[1:-1]


def _value_stop(text: str, pos: int, final: bool, stops: MarkerSet, close: str, parameter_open: str
                ) -> tuple[int, bool | None]:
    """Where the value from ``pos`` ends: ``(index, True)`` at its own close tag ``close``,
    ``(index, False)`` at an enclosing close tag among ``stops`` that ends it (left
    unconsumed), ``(index, None)`` at one that is undecided yet, ``(-1, None)`` if none has
    arrived.

    An enclosing close tag is data when the value's own close tag follows it before another
    parameter opens (``x </tool_call> y</parameter>``), looked for within ``_LOOKAHEAD``
    characters."""
    found = stops.search(text, pos)
    if found is None:
        return -1, None
    if found.group() == close:
        return found.start(), True
    after = found.end()
    window = text[after : after + _LOOKAHEAD]
    own, param = window.find(close), window.find(parameter_open)
    if own != -1 and (param == -1 or own < param):
        return after + own, True
    if param == -1 and not final and len(window) < _LOOKAHEAD:
        return found.start(), None
    return found.start(), False


class XmlValues(ToolParser):
    """The value half of the XML-like driver: how one argument value is read and written.

    A value ends at ``arg_value_close``; one declared ``"arguments"`` is the whole arguments
    object and ends at ``arguments_close``; one that starts with ``value_wrapper[0]`` (MiniCPM5's
    ``<![CDATA[``) is raw text up to ``value_wrapper[1]``, where a close tag is data.  The
    driver (``XmlToolParser``) owns the phases and calls ``_open_value`` / ``_consume_value``.
    """

    arg_value_close: str = ""
    # Qwen3-Coder style: one newline after the value's opening tag and one before its
    # closing tag are formatting, not value.
    value_newlines: bool = False
    # The close tag of a value declared ``"arguments"`` (see ``ArgNameStep``).
    arguments_close: str = ""
    # ``(open, close)`` around a raw value, stripped (None: values are not wrapped).
    value_wrapper: tuple[str, str] | None = None
    # The tag that opens a parameter and the one that closes a function (a value missing its
    # close tag ends at the latter; the call syntax constraints are built from both).
    parameter_open: str = ""
    function_close: str = ""
    _phase: int
    _properties: dict[str, Any]
    _args_open: bool

    def __init__(self, request: ParserRequest, id_factory: Callable[[], str] = new_call_id) -> None:
        # A value ends at its own close tag or, failing that, the function's or block's (left unconsumed).
        stops = (self.arg_value_close, self.function_close, self.tool_close_tag)
        self._value_stops = MarkerSet.of(stops)
        self._arg_end = MarkerSet.of((*stops, *("\n" + s for s in stops if s)) if self.value_newlines else stops)
        self._whole_end = MarkerSet.of((self.arguments_close,)) if self.arguments_close else self._arg_end
        self._wrap_end = MarkerSet.of((self.value_wrapper[1],)) if self.value_wrapper else self._arg_end
        super().__init__(request, id_factory)

    def _reset_value(self) -> None:
        self._value_mode = _STREAM
        self._value_kind: str | None = None
        self._value_fresh = False
        self._value_parts: list[str] = []
        self._value_scanner: JsonValueScanner | None = None
        self._value_close, self._value_end = self.arg_value_close, self._arg_end
        self._whole = False  # the arguments object arrives whole, as one JSON value
        self._wrapped = False  # inside ``value_wrapper``

    def _open_value(self, deltas: Deltas, key: str, declared: str | None) -> Payload:
        self._value_close, self._value_end = self.arg_value_close, self._arg_end
        self._wrapped = False
        if declared == "arguments" or self._whole:
            return self._open_whole(deltas)
        header = encode_basestring(key) + ": "
        self._calls.arguments(deltas, (", " if self._args_open else "{") + header)
        self._args_open = True
        if declared == "json":
            # A bare scalar is converted at the closing tag: by the schema, else as JSON.
            self._value_mode, self._value_kind = _JSON, schema_type(self._properties.get(key)) or "json"
            self._value_scanner = JsonValueScanner()
        else:
            kind = "string" if declared == "string" else schema_type(self._properties.get(key))
            self._value_kind = kind
            self._value_mode = _STREAM if kind in (None, "string") else _BUFFER
        self._value_parts = []
        self._value_fresh = declared != "string"  # declared raw text: a leading quote is data
        if not self._value_fresh:
            self._calls.arguments(deltas, '"')
        self._phase = _ARG_VALUE
        return MORE

    def _open_whole(self, deltas: Deltas) -> Payload:
        """The arguments object as one JSON value: forwarded as it comes if it is an object."""
        if self._args_open or self._whole:  # a second object, or the object among separate arguments
            return self._reject(deltas)
        self._whole, self._value_close, self._value_end = True, self.arguments_close, self._whole_end
        self._value_mode, self._value_kind = _JSON, "object"
        self._value_scanner = JsonValueScanner()
        self._value_parts = []
        self._value_fresh = True
        self._phase = _ARG_VALUE
        return MORE

    def _consume_value(self, text: str, pos: int, deltas: Deltas, final: bool) -> int:
        n = len(text)
        if self._value_fresh:
            start = pos
            if self.value_newlines and pos < n and text[pos] == "\n":
                pos += 1
            if pos >= n and not final:
                # The first character decides (a quote means a buffered literal); the
                # protocol newline stays unconsumed until then, so it is stripped once.
                return start
            wrapper = self.value_wrapper
            if wrapper is not None:
                if text.startswith(wrapper[0], pos):
                    pos += len(wrapper[0])
                    self._wrapped = True
                elif not final and n - pos < len(wrapper[0]) and wrapper[0].startswith(text[pos:]):
                    return start  # maybe the wrapper's opening: wait
            self._value_fresh = False
            if self._value_mode == _STREAM:
                if pos < n and text[pos] == '"' and not self._wrapped:
                    self._value_mode = _BUFFER
                else:
                    self._calls.arguments(deltas, '"')
        if self._value_mode == _JSON:
            pos = self._scan_json_value(text, pos, deltas, final)
        if self._wrapped:
            pos = self._consume_wrapped(text, pos, deltas, final)
            if self._wrapped:
                return pos
        close = self._value_close
        own: bool | None = True
        if self._whole:  # the arguments object ends at its own close tag only
            end = text.find(close, pos)
        else:
            end, own = _value_stop(text, pos, final, self._value_stops, close, self.parameter_open)
        if end == -1:
            stop = n if final else self._value_end.held_start(text, pos)
            self._take_value(text[pos:stop], deltas)
            return stop  # at final, _finish_payload finishes the value
        stop = end - 1 if self.value_newlines and end > pos and text[end - 1] == "\n" else end
        self._take_value(text[pos:stop], deltas)
        if own is None:
            return stop  # an enclosing close tag, undecided: held
        self._finish_value(deltas)
        self._phase = _ARG_START
        return end + len(close) if own else end

    def _consume_wrapped(self, text: str, pos: int, deltas: Deltas, final: bool) -> int:
        """Raw text up to the wrapper's close (a close tag inside is data); what follows the
        wrapper, up to the close tag, is value text as written."""
        close = self.value_wrapper[1]  # type: ignore[index]
        end = text.find(close, pos)
        if end == -1:
            stop = len(text) if final else self._wrap_end.held_start(text, pos)
            self._take_value(text[pos:stop], deltas)
            return stop
        self._take_value(text[pos:end], deltas)
        self._wrapped = False
        return end + len(close)

    def _scan_json_value(self, text: str, pos: int, deltas: Deltas, final: bool) -> int:
        """A value declared JSON is forwarded verbatim; a closing tag inside one of its
        strings is data.  What is not JSON is carried as written."""
        scanner = self._value_scanner
        if scanner is None or scanner.done:
            return pos
        if not scanner.started:
            while pos < len(text) and text[pos] in WHITESPACE:
                pos += 1
            if pos >= len(text):
                return pos
            if self._whole and text[pos] != "{":  # not an object: converted (or dropped) at the close
                self._value_mode, self._value_scanner = _BUFFER, None
                return pos
        fresh = not scanner.started
        end = scanner.scan(text, pos, final)
        # ``3``, ``True``, ``hello``: converted at the closing tag.  An object or array is
        # forwarded as it comes, even one that breaks off later (it may break in any chunk).
        if fresh and (scanner.is_scalar or (scanner.broken and not scanner.container)):
            self._value_mode, self._value_scanner = _BUFFER, None
            return pos
        if end > pos:
            self._calls.arguments(deltas, text[pos:end])
        if scanner.broken:
            self._value_scanner = None  # not JSON: the rest goes as written
        return end

    def _take_value(self, piece: str, deltas: Deltas) -> None:
        if not piece:
            return
        mode = self._value_mode
        if mode == _STREAM:
            self._calls.arguments(deltas, json_string_body(piece))
        elif mode == _BUFFER:
            self._value_parts.append(piece)
        elif self._value_scanner is None or not self._value_scanner.done:
            self._calls.arguments(deltas, piece)
        else:
            # Text after a complete JSON value is kept as written, except whitespace that
            # only precedes the closing tag (held until something else follows it).
            text = "".join(self._value_parts) + piece if self._value_parts else piece
            body = text.rstrip(WHITESPACE)
            if body:
                self._calls.arguments(deltas, body)
            self._value_parts = [text[len(body):]] if len(body) < len(text) else []

    def _finish_value(self, deltas: Deltas) -> None:
        mode = self._value_mode
        if mode == _STREAM:
            if self._value_fresh:
                self._calls.arguments(deltas, '""')
            else:
                self._calls.arguments(deltas, '"')
        elif mode == _BUFFER:
            value = convert_value("".join(self._value_parts), self._value_kind)
            self._calls.arguments(deltas, "{}" if self._whole and not value.startswith("{") else value)
            self._value_parts = []
        elif self._value_scanner is not None and not self._value_scanner.started:
            self._calls.arguments(deltas, "{}" if self._whole else '""')  # an empty JSON value
        self._value_parts = []  # (for JSON: whitespace before the closing tag)
        self._value_fresh = False



class XmlToolParser(XmlValues):
    streaming = "arguments: a string value as it grows; a typed value at its close tag"
    # The call syntax constraints are built from: the XGrammar name of the parameter
    # style, the tag that opens a parameter and the one that closes a function.
    argument_style: str = ""
    # The payload ends with its first call (MiniCPM5: the router reads the layout between calls).
    one_call_per_block: bool = False

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
        self._properties: dict[str, Any] = {}
        self._args_open = False
        self._reset_value()

    def _consume_stream_payload(self, text: str, deltas: Deltas, *, final: bool) -> PayloadStep:
        pos: int = 0
        while True:
            phase = self._phase
            if phase == _ARG_VALUE:
                pos = self._consume_value(text, pos, deltas, final)
                if self._phase == _ARG_VALUE:
                    return pos, RUN if self._value_mode == _STREAM and not self._value_fresh else MORE
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
                return pos, self._reject(deltas)
            pos = found[0]
            if phase == _FUNCTION:
                status = self._open_function(deltas, found[1], found[2])
            elif phase == _ARG_START:
                status = self._start_argument(deltas, found[1])
            else:
                status = self._open_value(deltas, found[1], found[2] if len(found) > 2 else None)
            if status is not MORE:
                return pos, status

    def _open_function(self, deltas: Deltas, name: str | None, after: str) -> Payload:
        if name is None:
            return PAYLOAD_CLOSED  # no function follows: the payload ends here
        self._begin_call()
        if self._bare and after != "done":
            self._deferred_name = name  # a block with no open tag proves itself first
        else:
            self._emit_name(deltas, name)
        schema = self.request.schema_for(name) if self.request.tools else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        self._properties = props if isinstance(props, dict) else {}
        self._args_open = False
        if after == "done":
            return self._close_arguments(deltas)
        self._phase = _ARG_START
        return MORE

    def _start_argument(self, deltas: Deltas, what: str) -> Payload:
        if self._deferred_name is not None:
            self._emit_name(deltas, self._deferred_name)
            self._deferred_name = None
        if what == "done":
            return self._close_arguments(deltas)
        self._phase = _ARG_NAME
        return MORE

    def _close_arguments(self, deltas: Deltas) -> Payload:
        """The call's arguments object ends, and the call: the payload goes on to the next
        function (``MORE``), or ends with it (``PAYLOAD_CLOSED``) with ``one_call_per_block``."""
        if not self._whole:
            self._calls.arguments(deltas, "}" if self._args_open else "{}")
        self._whole = False
        self._end_call(deltas)
        self._phase = _FUNCTION
        return PAYLOAD_CLOSED if self.one_call_per_block else MORE

    def feed_tool_block(self, text: str, deltas: Deltas, final: bool = False) -> BlockStep:
        # The fast lane: inside a streamed string value, a chunk that holds no head of a tag
        # ending the value (``</``: ``a <= b`` or ``List<str>`` pass) and does not end with
        # part of one is value text as it stands.
        if self._run_open and not final:
            ends = self._wrap_end if self._wrapped else self._value_end
            if ends.plain_run(text):
                self._calls.arguments_run(deltas, json_string_body(text))
                n = len(text)
                return RUN_STEPS[n] if n <= 1024 else run_step(n)
            # A chunk that only ends with what may begin the close tag (a line's ``\n`` before
            # ``\n</parameter>``, often the last token of a group): the text before it is value
            # text, and the rest waits for the next chunk.
            # (What is held may itself be a whole tag that a longer one begins with: not held then.)
            held = ends.held_start(text)
            if held < len(text) and (held == 0 or ends.plain_run(text[:held])) and ends.search(text, 0) is None:
                if held:
                    self._calls.arguments_run(deltas, json_string_body(text[:held]))
                return RUN_STEPS[held] if held <= 1024 else run_step(held)
        return ToolParser.feed_tool_block(self, text, deltas, final)  # (not super(): this is the hot entry)

    def _finish_payload(self, deltas: Deltas) -> Payload:
        phase = self._phase
        if phase == _ARG_VALUE:
            self._finish_value(deltas)
        if self.call_named:
            self._close_arguments(deltas)
            return PAYLOAD_CLOSED
        return super()._finish_payload(deltas)

    def _reject(self, deltas: Deltas | None) -> Payload:
        if self.committed and self.call_named and deltas is not None:
            self._close_arguments(deltas)  # malformed after a named call: its object is still closed
        return super()._reject(deltas)
