"""Streaming translation of a non-JSON value syntax (object literals) into JSON text.

Two halves, so other families reuse either one:

* ``JsonWriter`` is the output side: containers, keys, a string's text as it grows and
  complete scalars in, JSON source out (``json.dumps`` spacing: ``", "`` and ``": "``).
  It knows nothing of the input syntax.  MiniMax-M3's nested parameter elements drive it
  from element events (an ``NS<KEY>`` opener is ``key`` + ``begin_object`` or a string,
  ``NS<item>`` an array element), and Kimi-K3's typed arguments drive it per argument
  (``type="string"`` bodies through ``string_text`` as they arrive, other types through
  ``scalar`` once their closer comes).
* ``LiteralTranslator`` is the lexer of a ``ValueGrammar``: string delimiters with or
  without an escape character, bare keys, bare scalars that end at a terminator and are
  typed when complete (``type_bare_scalar``: true/false/null/number, else a string),
  nesting with ``{}`` and ``[]``.  Gemma 4's ``{key:<|"|>text<|"|>,n:3}`` is its first
  grammar; a family with quoted keys or another string delimiter is another grammar.

Streaming: a string value's text is written as it arrives (only a possible partial closing
delimiter is left unconsumed, at most ``len(close) - 1`` characters); a bare scalar is
consumed into the translator's own buffer and written once its terminator arrives (``tr``
may still become ``true``, ``108.`` ``108.2``), so held text is never scanned again.  A
bare key is left unconsumed until its ``:`` (at most ``_MAX_KEY`` characters, looked at
again with each chunk): a key that breaks off is then given back as text, not lost.
Every run of ordinary text is found by one compiled regex or ``str.find``; Python runs
once per structural character, never per character of text.
"""

from __future__ import annotations

from typing import Final

import json
import re

from ..markers import WHITESPACE, held_prefix_start

__all__ = ["JsonWriter", "ValueGrammar", "LiteralTranslator", "type_bare_scalar", "render_literal", "GEMMA_LITERAL",
           "GEMMA_PAREN_LITERAL"]

_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Bare words with a JSON meaning; ``None`` is how a Jinja template prints a Python None.
_WORDS: Final = {"true": "true", "false": "false", "null": "null", "None": "null"}


def _escaped(text: str) -> str:
    """``text`` as the inside of a JSON string (escaping is per character, so pieces join)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def type_bare_scalar(raw: str) -> str:
    """JSON text for a complete bare scalar: a literal, a number as written, else a string."""
    word = raw.strip(WHITESPACE)
    literal = _WORDS.get(word)
    if literal is not None:
        return literal
    if _NUMBER.fullmatch(word):
        return word
    return f'"{_escaped(word)}"'


class JsonWriter:
    """JSON source for a value built from events; ``out`` collects it until ``take``."""

    __slots__ = ("out", "_first", "depth")

    def __init__(self) -> None:
        self.out: list[str] = []
        self._first = True  # the next value or key is its container's first
        self.depth = 0

    def _separate(self) -> None:
        if not self._first:
            self.out.append(", ")
        self._first = False

    def begin(self, bracket: str) -> None:
        """A container opens (``"{"`` or ``"["``) where a value is due."""
        self.out.append(bracket)
        self._first = True
        self.depth += 1

    def end(self, bracket: str) -> None:
        """The innermost container closes (``"}"`` or ``"]"``)."""
        self.out.append(bracket)
        self._first = False
        self.depth -= 1

    def key(self, name: str) -> None:
        self._separate()
        self.out.append(f'"{_escaped(name)}": ')

    def key_start(self, name: str) -> None:
        """A key cut off by the end of the input: its JSON string, unterminated."""
        self._separate()
        self.out.append(f'"{_escaped(name)}')

    @property
    def empty(self) -> bool:
        """Nothing has been written into the innermost container yet."""
        return self._first

    def element(self) -> None:
        """An array element is due."""
        self._separate()

    def string_open(self) -> None:
        self.out.append('"')

    def string_text(self, text: str) -> None:
        if text:
            self.out.append(_escaped(text))

    def string_close(self) -> None:
        self.out.append('"')

    def scalar(self, raw: str) -> None:
        self.out.append(type_bare_scalar(raw))

    def take(self) -> str:
        text = "".join(self.out)
        self.out = []
        return text


class ValueGrammar:
    """A literal syntax: its string delimiters and escape, and what ends a bare token."""

    __slots__ = ("string_open", "string_close", "escape", "key_end", "item_sep", "forbidden", "outer", "_string_stop",
                 "_key_body", "_scalar_body")

    def __init__(self, string_open: str, string_close: str, *, escape: str | None = None, key_end: str = ":",
                 item_sep: str = ",", forbidden: str = "<", outer: str = "{}") -> None:
        self.string_open = string_open
        self.string_close = string_close
        self.escape = escape  # makes the next character literal inside a string (None: strings are raw)
        self.key_end = key_end
        self.item_sep = item_sep
        self.forbidden = forbidden  # no bare key or scalar holds one: the value is broken there
        # The outermost object's brackets (written as ``{}``): Gemma's ``call:NAME(k:v)`` variant uses ``()``.
        self.outer = outer
        stops = [re.escape(string_close)] + ([re.escape(escape)] if escape else [])
        self._string_stop = re.compile("|".join(stops))
        specials = re.escape(key_end + item_sep + "{}[]" + forbidden + string_open[0])
        self._key_body = re.compile(f"[^{specials}]*")
        ends = item_sep + "}]" + forbidden + (outer[1] if outer != "{}" else "")
        self._scalar_body = re.compile(f"[^{re.escape(ends)}]*")


def render_literal(value: object, grammar: ValueGrammar) -> str:
    """A JSON value written in ``grammar`` (keys in the order given; strings must not hold the
    closing delimiter, and are written raw: no grammar here escapes on output)."""
    if isinstance(value, dict):
        pairs = (f"{k}{grammar.key_end}{render_literal(v, grammar)}" for k, v in value.items())
        return "{" + grammar.item_sep.join(pairs) + "}"
    if isinstance(value, list):
        return "[" + grammar.item_sep.join(render_literal(v, grammar) for v in value) + "]"
    if isinstance(value, str):
        return f"{grammar.string_open}{value}{grammar.string_close}"
    return json.dumps(value)


# Gemma 4: ``<|"|>`` around raw strings (no escaping at all), bare keys; the same inside
# ``(`` ... ``)`` (vLLM's ``call:NAME(...)`` variant; there a bare scalar also ends at ``)``).
GEMMA_LITERAL: Final = ValueGrammar('<|"|>', '<|"|>')
GEMMA_PAREN_LITERAL: Final = ValueGrammar('<|"|>', '<|"|>', outer="()")

_MAX_KEY: Final = 256  # a bare key runs this long without its ``:``: not a key
# Lexer states.
_VALUE: Final = 0
_KEY: Final = 1
_AFTER: Final = 2
_STRING: Final = 3
_BARE_KEY: Final = 4
_SCALAR: Final = 5


class LiteralTranslator:
    """One value of a ``ValueGrammar`` fed in pieces, written as JSON into ``writer``.

    ``feed`` consumes from a position and returns where it stopped; ``done`` once the
    outermost value is complete, ``broken`` when the text cannot continue the value (what
    was written stays written; nothing is invented)."""

    __slots__ = ("grammar", "writer", "_stack", "_state", "_token", "done", "broken")

    def __init__(self, grammar: ValueGrammar) -> None:
        self.grammar = grammar
        self.writer = JsonWriter()
        self._stack: list[str] = []  # open containers' closing brackets
        self._state = _VALUE
        self._token: list[str] = []  # a bare scalar read so far
        self.done = False
        self.broken = False

    @property
    def in_string(self) -> bool:
        return self._state == _STRING

    def feed(self, text: str, pos: int, final: bool = False) -> int:
        n = len(text)
        while pos < n and not (self.done or self.broken):
            state = self._state
            if state == _STRING:
                before = pos
                pos = self._string(text, pos, final)
                if self._state == _STRING and pos == before:
                    break  # a partial delimiter or escape: wait for more
            elif state == _SCALAR or state == _BARE_KEY:
                before = pos
                pos = (self._bare if state == _SCALAR else self._key)(text, pos, final)
                if self._state == state and (pos == before or state == _SCALAR):
                    break
            else:
                while pos < n and text[pos] in WHITESPACE:
                    pos += 1
                if pos == n:
                    break
                before = pos
                pos = self._structural(text, pos, final)
                if pos == before and self._state == state:
                    break  # a partial string delimiter: wait for more
        if final and not self.done:
            self.finish()
        return pos

    def finish(self) -> None:
        """The input ended (or the value broke off): a bare scalar read so far is written as
        it stands, so what was read is never lost."""
        if self._token:
            self.writer.scalar("".join(self._token))
            self._token = []
            self._state = _AFTER

    def close_broken(self) -> None:
        """The value broke off: what was written is closed as JSON (an open string, a key
        whose value never came as ``""``, every open container), so a call that carried
        it still carries an object.  The text that broke it is not read."""
        w = self.writer
        self.finish()
        if self._state == _STRING:
            w.string_close()
        elif self._state == _VALUE and self._stack and self._stack[-1] != "]" and not w.empty:
            w.out.append('""')  # ``{k:`` then the break: the emptiest value, nothing read
        while self._stack:
            self._close(self._stack[-1])

    def _structural(self, text: str, pos: int, final: bool) -> int:
        """One structural step at ``text[pos]`` (not whitespace); returns ``pos`` to wait."""
        g, w, c = self.grammar, self.writer, text[pos]
        closer = self._stack[-1] if self._stack else ""
        if self._state == _AFTER:
            if c == closer:
                self._close(c)
            elif c == g.item_sep and closer:
                self._state = _VALUE if closer == "]" else _KEY
            else:
                self.broken = True
            return pos + 1
        if c == closer and w.empty:
            self._close(c)  # an empty container
            return pos + 1
        if text.startswith(g.string_open, pos) and self._state == _VALUE:
            self._value_due()
            w.string_open()
            self._state = _STRING
            return pos + len(g.string_open)
        if len(text) - pos < len(g.string_open) and g.string_open.startswith(text[pos:]):
            return len(text) if final else pos  # maybe a delimiter: wait (at the end: syntax)
        if c in g.forbidden or c in "{}[]" and self._state == _KEY or c in "}]" or c == g.item_sep:
            self.broken = True  # quoted keys, a missing value or a marker: not this grammar
            return pos
        if self._state == _KEY:
            self._state = _BARE_KEY
        elif c == "{" or c == "[" or not self._stack and c == g.outer[0]:
            self._value_due()
            w.begin("[" if c == "[" else "{")
            self._stack.append("]" if c == "[" else g.outer[1] if c == g.outer[0] else "}")
            self._state = _VALUE if c == "[" else _KEY
            return pos + 1
        elif not self._stack:
            self.broken = True  # the outermost value is a container
        else:
            self._value_due()
            self._state = _SCALAR
        return pos

    def _value_due(self) -> None:
        if self._stack and self._stack[-1] == "]":
            self.writer.element()

    def _close(self, bracket: str) -> None:
        self._stack.pop()
        self.writer.end("]" if bracket == "]" else "}")  # the outer ``)`` closes an object
        self._state = _AFTER
        self.done = not self._stack

    def _string(self, text: str, pos: int, final: bool) -> int:
        g, w = self.grammar, self.writer
        stop = g._string_stop.search(text, pos)
        if stop is None:
            end = held_prefix_start(text, g.string_close, pos)
            if g.escape and not final and end == len(text) and text.endswith(g.escape):
                end -= 1  # an escape waits for the character it makes literal
            w.string_text(text[pos:end])
            return len(text) if final else end  # at the end of the reply, a cut-off delimiter is syntax
        at = stop.start()
        w.string_text(text[pos:at])
        if stop.group() == g.string_close:
            w.string_close()
            self._state = _AFTER
            return at + len(g.string_close)
        if at + 1 >= len(text):
            return at  # an escape at the end: wait for its character
        w.string_text(text[at + 1])
        return at + 2

    def _bare(self, text: str, pos: int, final: bool) -> int:
        """A bare scalar runs to a separator or closer, read into the buffer as it comes."""
        g = self.grammar
        end = g._scalar_body.match(text, pos).end()  # type: ignore[union-attr]
        if end > pos:
            self._token.append(text[pos:end])
        if end == len(text):
            return end
        if text[end] in g.forbidden:
            self.broken = True
            self.finish()  # what was read stays written
            return end
        self.writer.scalar("".join(self._token))
        self._token = []
        self._state = _AFTER  # the terminator itself is the next structural step
        return end

    def _key(self, text: str, pos: int, final: bool) -> int:
        """A bare key runs to ``key_end``.  It stays unconsumed until then (keys are short:
        past ``_MAX_KEY`` it is prose), so a key that breaks off goes back to the text."""
        g = self.grammar
        end = g._key_body.match(text, pos).end()  # type: ignore[union-attr]
        name = text[pos:end].strip(WHITESPACE)
        if end == len(text):
            if final and name:  # cut off: written as the JSON string it began, like ``{"ci``
                self.writer.key_start(name)
                return end
            if end - pos > _MAX_KEY:
                self.broken = True
            return pos
        if text[end] != g.key_end or not name:
            self.broken = True
            return pos
        self.writer.key(name)
        self._state = _VALUE
        return end + 1
