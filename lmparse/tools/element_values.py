"""Streaming translation of nested XML-like elements into a JSON object.

A value grammar where every structural tag is a fixed prefix (a namespace marker) followed
by an XML-like tag, as MiniMax-M3 writes its parameters::

    P<city>Paris P</city>P<opts>P<unit>c P</unit>P</opts>P<tags>P<item>a P</item>P</tags>

(``P`` the prefix).  An element holds scalar text or child elements: children named
``item`` make an array (unless the schema says object), any other children an object, one
key per child, recursively.  ``ElementTranslator`` reads the members of one object (a
function's arguments) up to the root's closer and drives ``value_grammar.JsonWriter``, so
the JSON it writes has the spacing of every other dialect.

Typing is the schema's, as in the peers: a string-typed or untyped value streams as the
text arrives (only a possible partial prefix is held); a value of any other declared type
is buffered and converted at its closer by ``xml.convert_value`` (the XML dialects'
rule); an empty element is ``[]`` / ``{}`` when the schema says container, else ``""``.
Strings are raw: ``<``, ``>`` and newlines are data, and only a prefixed closer of an open
element ends a value (one whose own closer is missing ends at its parent's or the
function's).  Whitespace between elements, and between the prefix and its tag, is layout.
Text is scanned once: held text is at most a partial tag (bounded by ``_MAX_NAME``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ..markers import held_prefix_start, skip_ws
from ..schema import resolve, schema_type, streams_as_string, value_types
from .value_grammar import JsonWriter
from .xml import convert_value

__all__ = ["ElementTranslator", "render_elements"]

_MAX_NAME: Final = 256  # an element name longer than this is text, not a tag
_TAG: Final = re.compile(rf"<(/?)([^<>/\n]{{1,{_MAX_NAME}}})>")
_TAG_START: Final = re.compile(rf"<(/?)([^<>/\n]{{0,{_MAX_NAME}}})")  # a tag cut off by the end of the text
# Frame kinds: a container by its bracket, a streamed string, a buffered scalar, not yet known.
_STRING: Final = "s"
_SCALAR: Final = "b"
_UNKNOWN: Final = "?"
_EMPTY: Final = {"array": "[]", "object": "{}"}


class _Frame:
    __slots__ = ("name", "kind", "schema")

    def __init__(self, name: str, kind: str, schema: Any) -> None:
        self.name = name
        self.kind = kind
        self.schema = schema


def _child_schema(frame: _Frame, name: str, root: Any) -> Any:
    schema = resolve(frame.schema, root)
    schema = schema if isinstance(schema, dict) else {}
    if frame.kind == "[":
        return schema.get("items")
    props = schema.get("properties")
    return props.get(name) if isinstance(props, dict) else None


class ElementTranslator:
    """The members of one object, fed in pieces, written as JSON into ``writer``.

    ``feed`` consumes from a position and returns where it stopped.  ``done`` once the
    root's closer (``P</root>``) was read, or once a closer in ``outer`` (or an opener whose
    name starts with one of ``stops``: the next call) arrived where the root's was due (left
    unconsumed); ``broken`` when text stands where an element must
    (what was written stays written).  ``close`` ends whatever is open, at the end of the
    input or after a break: open strings and containers are closed, a buffered scalar is
    converted as it stands, nothing is invented."""

    __slots__ = ("prefix", "writer", "item", "outer", "stops", "_frames", "_parts", "done", "broken", "_root")

    def __init__(self, prefix: str, schema: Any, *, root: str, outer: tuple[str, ...] = (), stops: tuple[str, ...] = (),
                 item: str = "item") -> None:
        self.prefix = prefix
        self.writer = JsonWriter()
        self.item = item
        self.outer = outer
        self.stops = stops
        self._root = schema  # what the schemas' ``$ref``s point into
        self._frames = [_Frame(root, "{", schema)]
        self._parts: list[str] = []  # a buffered scalar read so far
        self.done = False
        self.broken = False
        self.writer.begin("{")

    def feed(self, text: str, pos: int, final: bool = False) -> int:
        while not (self.done or self.broken):
            kind = self._frames[-1].kind
            if kind == _STRING or kind == _SCALAR:
                step = self._scalar(text, pos, final)
            elif kind == _UNKNOWN:
                step = self._value_start(text, pos)
            else:
                step = self._members(text, pos)
            if step is None:
                break
            pos = step
        if final and not self.done:
            self.close()
        return pos

    def close(self) -> None:
        while self._frames:
            self._close_frame()

    # ---- tags ---------------------------------------------------------------------------

    def _tag(self, text: str, pos: int) -> tuple[bool, str, int] | bool | None:
        """The tag at ``pos`` as ``(closing, name, end)``; None while it may still be one,
        False when it is not one."""
        p, n = self.prefix, len(text)
        if not text.startswith(p, pos):
            return None if n - pos < len(p) and p.startswith(text[pos:]) else False
        at = skip_ws(text, pos + len(p))  # ``P <city>``: SGLang normalizes the space away too
        match = _TAG.match(text, at)
        if match is not None:
            return match.group(1) == "/", match.group(2), match.end()
        start = _TAG_START.match(text, at)
        return None if at == n or (start is not None and start.end() == n) else False

    def _ends_open_element(self, name: str) -> bool:
        return name in self.outer or any(f.name == name for f in self._frames)

    def _ends_here(self, found: tuple[bool, str, int]) -> bool:
        """A tag that ends every open element, left for the tool parser: a closer of the
        block (``outer``) that no open element has, or an opener of the next call (``stops``)."""
        closing, name = found[0], found[1]
        if closing:
            return name in self.outer and not any(f.name == name for f in self._frames)
        return name.startswith(self.stops) if self.stops else False

    def _close_to(self, name: str) -> bool:
        """A closer named ``name``: every element up to the innermost open one of that name
        closes (those whose own closer is missing end here).  False: it closes nothing."""
        for depth in range(len(self._frames) - 1, -1, -1):
            if self._frames[depth].name == name:
                while len(self._frames) > depth:
                    self._close_frame()
                self.done = not self._frames
                return True
        return False

    def _close_frame(self) -> None:
        frame = self._frames.pop()
        w = self.writer
        if frame.kind == "{" or frame.kind == "[":
            w.end("}" if frame.kind == "{" else "]")
        elif frame.kind == _STRING:
            w.string_close()
        elif frame.kind == _SCALAR:
            w.out.append(convert_value("".join(self._parts), value_types(frame.schema, self._root)))
            self._parts = []
        else:
            w.out.append(_EMPTY.get(schema_type(frame.schema, self._root) or "", '""'))

    # ---- states ---------------------------------------------------------------------------

    def _members(self, text: str, pos: int) -> int | None:
        """Between a container's elements: layout, then a child's opener or a closer."""
        pos = skip_ws(text, pos)
        found = self._tag(text, pos) if pos < len(text) else None
        if found is None:
            return None  # the layout is taken with the tag after it (it goes back as text if none comes)
        if found is False or not isinstance(found, tuple):
            self.broken = True  # text where an element belongs
            return None
        closing, name, end = found
        if self._ends_here(found):
            self.close()
            self.done = True
            return pos  # the block's closer or the next call is the tool parser's
        if closing:
            if not self._close_to(name):
                self.broken = True
                return None
            return end
        frame = self._frames[-1]
        if frame.kind == "{":
            self.writer.key(name)
        else:
            self.writer.element()
        self._frames.append(_Frame(name, _UNKNOWN, _child_schema(frame, name, self._root)))
        return end

    def _value_start(self, text: str, pos: int) -> int | None:
        """A value's first text decides: a child element, its own closer (empty) or text."""
        if pos >= len(text):
            return None
        found = self._tag(text, pos)
        if found is None:
            return None
        frame = self._frames[-1]
        if isinstance(found, tuple):
            closing, name, end = found
            if closing and self._ends_open_element(name) or self._ends_here(found):
                return self._members(text, pos)  # an empty element (or a missing closer)
            if not closing:
                array = name == self.item and schema_type(frame.schema, self._root) != "object"
                frame.kind = "[" if array else "{"
                self.writer.begin(frame.kind)
                return pos
        frame.kind = _STRING if streams_as_string(value_types(frame.schema, self._root), text[pos]) else _SCALAR
        if frame.kind == _STRING:
            self.writer.string_open()
        return pos

    def _scalar(self, text: str, pos: int, final: bool) -> int | None:
        """Scalar text up to a prefixed closer of an open element; other tags are data."""
        p, n = self.prefix, len(text)
        at = text.find(p, pos)
        closer: tuple[bool, str, int] | None = None
        while at != -1:
            found = self._tag(text, at)
            if found is None:
                break  # maybe a closer: wait (at the end of the input it is text)
            if isinstance(found, tuple) and (found[0] and self._ends_open_element(found[1]) or self._ends_here(found)):
                closer = found
                break
            at = text.find(p, at + 1)
        stop = n if final and closer is None else at if at != -1 else held_prefix_start(text, p, pos)
        self._take(text[pos:stop])
        if closer is None:
            return stop if stop > pos else None
        if self._ends_here(closer):
            self.close()
            self.done = True
            return at
        self._close_to(closer[1])
        return closer[2]

    def _take(self, piece: str) -> None:
        if not piece:
            return
        if self._frames[-1].kind == _STRING:
            self.writer.string_text(piece)
        else:
            self._parts.append(piece)


def render_elements(value: Any, prefix: str, item: str = "item") -> str:
    """A JSON value's members as prefixed elements, as the MiniMax-M3 template writes them:
    null members omitted, strings raw, other scalars as JSON."""
    if isinstance(value, dict):
        return "".join(f"{prefix}<{k}>{render_elements(v, prefix, item)}{prefix}</{k}>"
                       for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"{prefix}<{item}>{render_elements(v, prefix, item)}{prefix}</{item}>" for v in value)
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)
