"""XmlValueReader: how one argument value of an XML-like call is read and written as JSON.

The XML driver (``lmparse.tools.xml``) owns the phases of a call and holds one reader; the
reader owns the current call's arguments object from its ``{`` to its ``}``: a value ends at
its close tag (or, failing that, at the function's or the block's, left unconsumed); one
declared ``"arguments"`` is the whole arguments object and ends at ``arguments_close``; one
that starts with ``value_wrapper[0]`` (MiniCPM5's ``<![CDATA[``) is raw text up to
``value_wrapper[1]``, where a close tag is data.  Unquoted strings stream as soon as their
type is known; quoted values and schema-typed non-strings wait for their close tag and are
converted then (``convert_value``); a value declared JSON is forwarded verbatim.
"""

from __future__ import annotations

import json
from json import encoder as _encoder
from typing import Any, Final, NamedTuple

from ..markers import WHITESPACE, MarkerSet
from ..schema import Kinds, convert_value, declared_type, streams_as_string, value_types
from .calls import CallEmitter, Events
from .json_scanner import JsonValueScanner

__all__ = ["XmlValueReader", "Typed", "convert_value", "argument_items", "json_string_body"]

# The C encoders, as Final names (mypyc reads them without a globals lookup per call).
_ENCODE: Final = _encoder.encode_basestring
_ENCODE_ASCII: Final = _encoder.encode_basestring_ascii

class Typed(NamedTuple):
    """A value whose type the call syntax writes (K2 Horizon's ``<ifm|arg_type>``): converted
    by ``lmparse.schema.declared_type`` of it and the property's schema."""

    name: str


# How a value is carried into the arguments object.
_STREAM: Final = 0
_BUFFER: Final = 1
_JSON: Final = 2

# How far past an enclosing close tag met inside a value the value's own close tag is looked for.
_LOOKAHEAD: Final = 256


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
        return _ENCODE_ASCII(text)[1:-1]
    return _ENCODE(text)[1:-1]


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


class XmlValueReader:
    """The values of one block's calls, written into each call's arguments object.

    Per call: ``begin_call`` (the function's schema properties), then per value ``open``
    and ``consume`` until ``reading`` is false (``finish`` at the end of input), then
    ``close_arguments``."""

    __slots__ = ("_calls", "value_close", "value_newlines", "arguments_close", "wrapper", "parameter_open",
                 "_value_stops", "_arg_end", "_whole_end", "_wrap_end", "reading", "_mode", "_kind", "_fresh",
                 "_parts", "_scanner", "_close", "_end", "_whole", "_wrapped", "_args_open", "_properties", "_root",
                 "_either", "lane", "_header")

    def __init__(self, calls: CallEmitter, value_close: str, enclosing: tuple[str | None, ...], *,
                 value_newlines: bool = False, arguments_close: str = "", wrapper: tuple[str, str] | None = None,
                 parameter_open: str = "") -> None:
        self._calls = calls
        self.value_close = value_close
        # Qwen3-Coder style: one newline after the value's opening tag and one before its
        # closing tag are formatting, not value.
        self.value_newlines = value_newlines
        self.arguments_close = arguments_close
        self.wrapper = wrapper
        self.parameter_open = parameter_open
        # A value ends at its own close tag or, failing that, the function's or block's (left unconsumed).
        stops = (value_close, *enclosing)
        self._value_stops = MarkerSet.of(stops)
        self._arg_end = MarkerSet.of((*stops, *("\n" + s for s in stops if s)) if value_newlines else stops)
        self._whole_end = MarkerSet.of((arguments_close,)) if arguments_close else self._arg_end
        self._wrap_end = MarkerSet.of((wrapper[1],)) if wrapper else self._arg_end
        self.reset()

    def reset(self) -> None:
        """A new block: no call, no value."""
        self.reading = False  # inside a value (``consume`` goes on)
        # After ``consume``, inside a streamed string value: the markers that may end it (a
        # chunk without them is value text as it stands: the driver's fast lane); else None.
        self.lane: MarkerSet | None = None
        self._mode = _STREAM
        self._kind: str | Kinds | None = None
        self._either = False  # a string or another type: the first character decides
        self._fresh = False
        self._parts: list[str] = []
        self._scanner: JsonValueScanner | None = None
        self._close, self._end = self.value_close, self._arg_end
        self._whole = False  # the arguments object arrives whole, as one JSON value
        self._wrapped = False  # inside ``wrapper``
        self._args_open = False  # the arguments object's ``{`` was written
        # A typed value's ``{"key": `` (or ``, "key": ``), written with the value at its close
        # tag (``CallEmitter.member``): nothing of the member goes out before it is whole.
        self._header = ""
        self._properties: dict[str, Any] = {}
        self._root: Any = None

    def begin_call(self, properties: dict[str, Any], root: Any = None) -> None:
        """A call's arguments begin; ``properties``: its schema's (they type the values),
        ``root``: the parameters schema their ``$ref``s point into."""
        self._properties = properties
        self._root = root
        self._args_open = False

    def open(self, events: Events, key: str, declared: str | Typed | None) -> bool:
        """A value for ``key`` starts (``declared``: the type its syntax gives, if any).
        False: the arguments object cannot take it (a second whole object, or one among
        separate arguments): the call is malformed."""
        self._close, self._end = self.value_close, self._arg_end
        self._wrapped = False
        self.lane = None
        if declared == "arguments" or self._whole:
            return self._open_whole()
        head = ("{" if not self._args_open else ", ") + _ENCODE(key) + ": "
        self._args_open = True
        self._either = False
        if declared == "json":
            # A bare scalar is converted at the closing tag: by the schema, else as JSON.
            kinds = value_types(self._properties.get(key), self._root)
            self._mode, self._kind = _JSON, kinds or "json"
            self._scanner = JsonValueScanner()
        else:
            if isinstance(declared, Typed):
                kinds = (declared_type(declared.name, self._properties.get(key), self._root),)
            else:
                kinds = ("string",) if declared == "string" else value_types(self._properties.get(key), self._root)
            self._kind = kinds
            if kinds is None or kinds == ("string",):
                self._mode = _STREAM
            else:
                self._mode = _STREAM if "string" in kinds else _BUFFER
                self._either = self._mode == _STREAM
        if self._mode == _BUFFER:
            self._header = head
        else:
            self._calls.arguments(events, head)
        self._parts = []
        # Declared raw text (``string``, or a written type that is a string): a leading quote is data.
        self._fresh = not (declared == "string" or (isinstance(declared, Typed) and self._mode == _STREAM))
        if not self._fresh:
            self._calls.arguments(events, '"')
        self.reading = True
        return True

    def _open_whole(self) -> bool:
        """The arguments object as one JSON value: forwarded as it comes if it is an object."""
        if self._args_open or self._whole:  # a second object, or the object among separate arguments
            return False
        self._whole, self._close, self._end = True, self.arguments_close, self._whole_end
        self._mode, self._kind = _JSON, "object"
        self._scanner = JsonValueScanner()
        self._parts = []
        self._fresh = True
        self.reading = True
        return True

    def consume(self, text: str, pos: int, events: Events, final: bool) -> int:
        """Read the value from ``pos``: the new position (``reading`` turns false at its end)."""
        n = len(text)
        if self._fresh:
            start = pos
            if self.value_newlines and pos < n and text[pos] == "\n":
                pos += 1
            if pos >= n and not final:
                # The first character decides (a quote means a buffered literal); the
                # protocol newline stays unconsumed until then, so it is stripped once.
                return start
            wrapper = self.wrapper
            if wrapper is not None:
                if text.startswith(wrapper[0], pos):
                    pos += len(wrapper[0])
                    self._wrapped = True
                elif not final and n - pos < len(wrapper[0]) and wrapper[0].startswith(text[pos:]):
                    return start  # maybe the wrapper's opening: wait
            self._fresh = False
            if self._mode == _STREAM:
                kinds = self._kind if self._either and not isinstance(self._kind, str) else None
                if pos < n and not self._wrapped and (
                        not streams_as_string(kinds, text[pos]) if kinds else text[pos] == '"'):
                    self._mode = _BUFFER
                else:
                    self._calls.arguments(events, '"')
        if self._mode == _JSON:
            pos = self._scan_json(text, pos, events, final)
        if self._wrapped:
            pos = self._consume_wrapped(text, pos, events, final)
            if self._wrapped:
                self.lane = self._wrap_end if self._mode == _STREAM else None
                return pos
        close = self._close
        own: bool | None = True
        if self._whole:  # the arguments object ends at its own close tag only
            end = text.find(close, pos)
        else:
            end, own = _value_stop(text, pos, final, self._value_stops, close, self.parameter_open)
        if end == -1:
            stop = n if final else self._end.held_start(text, pos)
            self._take(text[pos:stop], events)
            self.lane = self._end if self._mode == _STREAM else None
            return stop  # at final, the driver finishes the value
        stop = end - 1 if self.value_newlines and end > pos and text[end - 1] == "\n" else end
        self._take(text[pos:stop], events)
        if own is None:
            self.lane = self._end if self._mode == _STREAM else None
            return stop  # an enclosing close tag, undecided: held
        self.finish(events)
        return end + len(close) if own else end

    def _consume_wrapped(self, text: str, pos: int, events: Events, final: bool) -> int:
        """Raw text up to the wrapper's close (a close tag inside is data); what follows the
        wrapper, up to the close tag, is value text as written."""
        close = self.wrapper[1]  # type: ignore[index]
        end = text.find(close, pos)
        if end == -1:
            stop = len(text) if final else self._wrap_end.held_start(text, pos)
            self._take(text[pos:stop], events)
            return stop
        self._take(text[pos:end], events)
        self._wrapped = False
        return end + len(close)

    def _scan_json(self, text: str, pos: int, events: Events, final: bool) -> int:
        """A value declared JSON is forwarded verbatim; a closing tag inside one of its
        strings is data.  What is not JSON is carried as written."""
        scanner = self._scanner
        if scanner is None or scanner.done:
            return pos
        if not scanner.started:
            while pos < len(text) and text[pos] in WHITESPACE:
                pos += 1
            if pos >= len(text):
                return pos
            if self._whole and text[pos] != "{":  # not an object: converted (or dropped) at the close
                self._mode, self._scanner = _BUFFER, None
                return pos
        fresh = not scanner.started
        end = scanner.scan(text, pos, final)
        # ``3``, ``True``, ``hello``: converted at the closing tag.  An object or array is
        # forwarded as it comes, even one that breaks off later (it may break in any chunk).
        if fresh and (scanner.is_scalar or (scanner.broken and not scanner.container)):
            self._mode, self._scanner = _BUFFER, None
            return pos
        if end > pos:
            self._calls.arguments(events, text[pos:end])
        if scanner.broken:
            self._scanner = None  # not JSON: the rest goes as written
        return end

    def _take(self, piece: str, events: Events) -> None:
        if not piece:
            return
        mode = self._mode
        if mode == _STREAM:
            self._calls.string_body(events, json_string_body(piece))
        elif mode == _BUFFER:
            self._parts.append(piece)
        elif self._scanner is None or not self._scanner.done:
            self._calls.arguments(events, piece)
        else:
            # Text after a complete JSON value is kept as written, except whitespace that
            # only precedes the closing tag (held until something else follows it).
            text = "".join(self._parts) + piece if self._parts else piece
            body = text.rstrip(WHITESPACE)
            if body:
                self._calls.arguments(events, body)
            self._parts = [text[len(body):]] if len(body) < len(text) else []

    def finish(self, events: Events) -> None:
        """The value ends here (at its close tag, or at the end of input): what was held is written."""
        mode = self._mode
        if mode == _STREAM:
            self._calls.arguments(events, '""' if self._fresh else '"')
        elif mode == _BUFFER:
            value = convert_value("".join(self._parts), self._kind)
            if self._header:
                self._calls.member(events, self._header, value)
                self._header = ""
            else:
                self._calls.arguments(events, "{}" if self._whole and not value.startswith("{") else value)
                self._calls.value_end(events)  # (a typed scalar is whole at its close tag)
        elif self._scanner is not None and not self._scanner.started:
            self._calls.arguments(events, "{}" if self._whole else '""')  # an empty JSON value
        self._parts = []  # (for JSON: whitespace before the closing tag)
        self._fresh = False
        self.reading = False
        self.lane = None

    def close_arguments(self, events: Events) -> None:
        """The call's arguments object ends (a whole object closed itself)."""
        if not self._whole:
            self._calls.arguments(events, "}" if self._args_open else "{}")
        self._whole = False
