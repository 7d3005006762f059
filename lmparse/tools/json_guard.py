"""JsonGuard: the argument text of one accepted call, kept a JSON object however it breaks.

Issue 23, rule 6: a malformed call never yields arguments that are not JSON.  Every dialect
writes a call's arguments through the ``CallEmitter``, which passes them through this guard.
It reads the JSON grammar as the text streams and lets out only text after which the object
can still be closed by adding closers alone (``"``, ``}``, ``]``): an object key, a colon, a
separator and a bare scalar (``tru``, ``1.``) are held until what follows them makes them
safe (a value begins, the scalar ends).  Text that breaks the grammar (a marker inside a
value, a second value, arguments that are not an object) and everything after it, with what
was held, is not argument text: the emitter records it as a ``dropped`` record.  ``close``
ends the object with the closers it owes and nothing invented besides them.
"""

from __future__ import annotations

import re
from typing import Final

from .._mypyc import compiled
from .json_scanner import WHOLE_DECODER, string_end

__all__ = ["JsonGuard", "bad_escape", "plain_string_body"]

# Where the grammar stands.  The "safe" states are those at which text may be let out:
# the object can be closed from there by closers alone.
# (``Final`` ints: the compiled core reads them as constants; the safe states are the odd ones,
# so "is it safe" is one bit test.)
_START: Final = 0
_KEY_OR_END: Final = 1
_KEY: Final = 2
_AFTER: Final = 3
_COLON: Final = 4
_VALUE_OR_END: Final = 5
_VALUE: Final = 6
_STRING: Final = 7
_KEY_STRING: Final = 8
_DONE: Final = 9
_ESCAPE: Final = 10
_UNICODE: Final = 12
_TOKEN: Final = 14
_WS: Final = " \t\n\r"
_TOKEN_CHARS: Final = frozenset("0123456789+-.eEtrufalsn")
_TOKEN_RUN: Final = re.compile(r"[0-9+\-.eEtrufalsn]*")
_SCALAR: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
# A string body: plain characters and whole escapes.  It stops at the closing quote, at a
# backslash whose escape is not whole (yet) or not valid, or at the end.
_BODY: Final = r'[^"\\]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\]*)*'
_STRING_RUN: Final = re.compile(_BODY)
_HEX: Final = frozenset("0123456789abcdefABCDEF")
# Below this many characters the C decoder cannot pay for a failed try.
_DECODE_MIN: Final = 256
# Whole members read in one C match (most argument text is flat runs of them): a scalar
# counts only when what follows it shows it ended, so a match never ends inside one.
_W: Final = r"[ \t\n\r]*"
_SV: Final = rf'(?:"{_BODY}"|(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)(?=[ \t\n\r,\]}}]))'
# (a value: a string, a scalar, or an array or object of those: nesting stops a match)
_V: Final = (rf'(?:{_SV}|\[{_W}(?:{_SV}(?:{_W},{_W}{_SV})*{_W})?\]'
      rf'|\{{{_W}(?:"{_BODY}"{_W}:{_W}{_SV}(?:{_W},{_W}"{_BODY}"{_W}:{_W}{_SV})*{_W})?\}})')
_M: Final = rf'{_W}"{_BODY}"{_W}:{_W}{_V}'
_OBJECT_FROM_KEY: Final = re.compile(rf"{_M}(?:{_W},{_M})*")
_OBJECT_FROM_VALUE: Final = re.compile(rf"{_W}{_V}(?:{_W},{_M})*")
_OBJECT_AFTER: Final = re.compile(rf"(?:{_W},{_M})+")
_ARRAY_FROM_VALUE: Final = re.compile(rf"{_W}{_V}(?:{_W},{_W}{_V})*")
_ARRAY_AFTER: Final = re.compile(rf"(?:{_W},{_W}{_V})+")


# A backslash that begins no valid escape, or a ``\\u`` without four hex digits after it.  Found
# also where an escaped backslash precedes such a letter (``\\\\q``): a false alarm only
# sends the text the slow way; a real one is never missed.
_BAD_ESCAPE: Final = re.compile(r'\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4}))')


def bad_escape(text: str) -> bool:
    """Whether ``text`` (string-body text) may hold an escape that is not valid JSON."""
    return "\\" in text and _BAD_ESCAPE.search(text) is not None


def plain_string_body(text: str) -> bool:
    """Whether ``text`` is string-body text alone: no quote that ends the string, only
    valid escapes, none left pending (a false "no" is possible: see ``_BAD_ESCAPE``)."""
    if '"' not in text and "\\" not in text:
        return True
    return string_end(text) == -1 and not bad_escape(text)


class JsonGuard:
    """One call's argument text through the JSON grammar (see the module)."""

    __slots__ = ("_stack", "_state", "_safe_state", "_held", "_token", "_hex", "_escaped_from", "broken", "plain")

    def __init__(self) -> None:
        self._stack: list[str] = []  # the closers owed, innermost last
        self._state = _START
        self._safe_state = _START  # the state at the last safe point (what ``close`` starts from)
        self._held = ""  # text since the last safe point
        self._token = 0  # where the bare scalar being read starts in ``_held``
        self._hex = 0  # hex digits still due in a ``\\u`` escape
        self._escaped_from = _STRING  # the string state an escape returns to
        self.broken = False
        # Inside a string value with nothing held: string-body text (no closing quote, whole
        # escapes) goes out as it is and leaves the guard as it stands, so a fast lane needs
        # no grammar step for it (kept by ``feed`` and ``close``).
        self.plain = False

    def copy(self) -> JsonGuard:
        other = JsonGuard() if _COMPILED else JsonGuard.__new__(JsonGuard)
        other._stack = self._stack[:]
        other._state = self._state
        other._safe_state = self._safe_state
        other._held = self._held
        other._token = self._token
        other._hex = self._hex
        other._escaped_from = self._escaped_from
        other.broken = self.broken
        other.plain = self.plain
        return other

    def feed(self, text: str) -> tuple[str, str]:
        """``(text that may go out now, text that broke the grammar with all after it)``."""
        if self.broken:
            return "", text
        if self.plain and plain_string_body(text):
            return text, ""  # (inside a value string, nothing held: it stands as it is)
        if self._state == _START and len(text) >= _DECODE_MIN and text.lstrip(_WS)[:1] == "{":
            # A whole object in one piece (a complete parse): the C decoder reads it at once.
            try:
                end = WHOLE_DECODER.raw_decode(text, len(text) - len(text.lstrip(_WS)))[1]
            except (ValueError, RecursionError):
                pass
            else:
                if not text[end:].strip(_WS):
                    self._state = self._safe_state = _DONE
                    return text, ""
        buf = self._held + text if self._held else text
        n = len(buf)
        out = 0  # buf[:out] may go out
        i = len(self._held)  # (held text was read already)
        stack = self._stack
        state = self._state
        while i < n:
            if n - i > 24 and stack and (state == _AFTER or state == _KEY_OR_END or state == _KEY or state == _VALUE
                          or state == _VALUE_OR_END):
                if stack[-1] == "}":
                    bulk = (_OBJECT_AFTER if state == _AFTER else
                            _OBJECT_FROM_VALUE if state == _VALUE else _OBJECT_FROM_KEY)
                else:
                    bulk = _ARRAY_AFTER if state == _AFTER else _ARRAY_FROM_VALUE
                m = bulk.match(buf, i)
                if m is not None and m.end() > i:  # whole members: safe after the last
                    i = out = m.end()
                    state = self._safe_state = _AFTER
                    if i == n:
                        break
            c = buf[i]
            if state == _STRING or state == _KEY_STRING:
                i = _STRING_RUN.match(buf, i).end()  # type: ignore[union-attr]
                if state == _STRING:
                    out = i  # (the safe state is this string's)
                if i < n:
                    if buf[i] == '"':
                        state = _AFTER if state == _STRING else _COLON
                    else:
                        self._escaped_from, state = state, _ESCAPE
                    i += 1
            elif state == _ESCAPE:
                if c == "u":
                    self._hex, state = 4, _UNICODE
                elif c in '"\\/bfnrt':
                    state = self._escaped_from
                else:
                    break
                i += 1
            elif state == _UNICODE:
                if c not in _HEX:
                    break
                self._hex -= 1
                if not self._hex:
                    state = self._escaped_from
                i += 1
            elif state == _TOKEN:
                i = _TOKEN_RUN.match(buf, i).end()  # type: ignore[union-attr]
                if i == n:
                    break  # (more of the scalar may follow)
                if not _SCALAR.fullmatch(buf, self._token, i):
                    i = self._token
                    break
                state = _AFTER
                if buf[i] in _WS:
                    i += 1  # (``_AFTER`` takes the delimiter otherwise)
            elif c in _WS:
                if state & 1:
                    out = i + 1
                i += 1
                continue
            elif state == _AFTER:
                closer = stack[-1] if stack else ""
                if c == closer:
                    stack.pop()
                    state = _AFTER if stack else _DONE
                elif c == "," and closer:
                    state = _KEY if closer == "}" else _VALUE
                else:
                    break
                i += 1
            elif state == _KEY_OR_END or state == _KEY:
                if c == '"':
                    state = _KEY_STRING
                elif c == "}" and state == _KEY_OR_END:
                    stack.pop()
                    state = _AFTER if stack else _DONE
                else:
                    break
                i += 1
            elif state == _COLON:
                if c != ":":
                    break
                state = _VALUE
                i += 1
            elif state == _VALUE or state == _VALUE_OR_END or state == _START:
                if c == "{":
                    stack.append("}")
                    state = _KEY_OR_END
                elif c == "]" and state == _VALUE_OR_END:
                    stack.pop()
                    state = _AFTER
                elif state == _START:
                    break  # arguments are an object
                elif c == "[":
                    stack.append("]")
                    state = _VALUE_OR_END
                elif c == '"':
                    state = _STRING
                elif c in _TOKEN_CHARS:
                    self._token = i
                    state = _TOKEN
                else:
                    break
                i += 1
            else:  # _DONE: only whitespace may follow the object
                break
            if state & 1:
                out = i
                self._safe_state = state
        self._state = state
        if i < n:  # broke at ``i``: what was held since the last safe point breaks with it
            self.broken = True
            self.plain = False
            self._state = self._safe_state
            self._held = ""
            return buf[:out], buf[out:]
        self._held = held = buf[out:]
        self._token -= out
        self.plain = state == _STRING and not held
        return buf[:out], ""

    def take_whole(self) -> bool:
        """Before anything was read: the caller's text is a whole JSON object it has proven
        valid, so the guard stands after it without reading it.  False once text was read."""
        if self._state != _START or self._held or self.broken:
            return False
        self._state = self._safe_state = _DONE
        return True

    def take_member(self, first: bool, value: str) -> bool:
        """The caller's whole member of the top object (``{"key": `` or ``, "key": `` and
        ``value``), at a point where one may start: the guard stands after it without reading
        the head.  Only a value that is a scalar or a string the caller encoded is taken
        so; False (nothing changed) otherwise: the caller feeds the text."""
        if self._held or self.broken or not (value[:1] == '"' or _SCALAR.fullmatch(value)):
            return False
        if first:
            if self._state != _START:
                return False
            self._stack.append("}")
        elif self._state != _AFTER or self._stack != ["}"]:
            return False
        self._state = self._safe_state = _AFTER
        self.plain = False
        return True

    def end_value(self) -> str:
        """The dialect knows the value it just wrote is whole (it met the value's close tag): a
        bare scalar held only because more of it could follow goes out, with what was held
        before it (its key).  Empty when nothing was held for that reason."""
        if self.broken or self._state != _TOKEN or not _SCALAR.fullmatch(self._held, self._token):
            return ""
        out = self._held
        self._held = ""
        self._token = 0
        self._state = self._safe_state = _AFTER
        return out

    def close(self) -> tuple[str, str]:
        """The arguments end here: ``(text that closes the object, held text that is not
        argument text)``.  Empty closing text when nothing began (the emitter writes ``{}``)."""
        held, state = self._held, self._state
        if state == _TOKEN and _SCALAR.fullmatch(held, self._token):
            suffix, left, state = held, "", _AFTER  # a scalar the end completes
        elif state & 1:
            suffix, left = held, ""
        else:
            suffix, left, state = "", held, self._safe_state
        if state == _STRING:
            suffix += '"'
        if state != _START:
            suffix += "".join(reversed(self._stack))
        self._stack = []
        self._held = ""
        self._state = _DONE
        self.plain = False
        return suffix, left


# (compiled, ``object.__new__`` may not make a JsonGuard, and its constructor is cheap)
_COMPILED: Final = compiled(plain_string_body)
