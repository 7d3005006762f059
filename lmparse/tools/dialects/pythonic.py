"""Pythonic tool calls: ``[f(a=1, b="x"), g()]`` (Llama 3.2 / Llama 4 pythonic, OLMo).

A Python list of calls with keyword arguments whose values are Python literals
(strings, numbers, True/False/None, lists, dicts, tuples).  Llama 4 wraps the list in
``<|python_start|>`` ... ``<|python_end|>``; without the wrapper, a reply whose first
non-blank character is ``[`` is a candidate block (bare start; only at the very start of
a reply that starts plain: a ``[`` after reasoning or prose is text).

Streaming: a small lexical scanner follows brackets and string literals (quotes, triple
quotes, escapes) over each chunk once.  When the ``)`` closing a call arrives, that call
alone is parsed with ``ast`` (never evaluated) and emitted whole: identity, then its
arguments as JSON (``json.dumps`` of each literal, in the written order, duplicates kept).
Arguments cannot stream earlier: a call is known to be valid only at its ``)``.

Validity: a block holding no valid call (``[1, 2]``, ``[see (here)]``, ``[]``,
``[print(x)]``, a first call cut off by the end of input) is text exactly as written.
Once a block holds a call (or a call to a name the request does not expose), the
other calls that are not tool calls -- positional or ``**`` arguments, a value that is
not a literal with a JSON form (names, expressions, bytes, sets, complex, inf/nan), cut
off by the end of input -- are dropped and recorded in ``dropped``, and an element that
is not call-shaped at all ends the block there (the rest is text).

Tokenization: the wrapper tags are single special tokens of Llama 4, whose tokenizer we
do not have.  In Llama 3.2 the list tokenizes as ``[``, ``get``, ``_weather``, ``(city``,
``="``, ... ``),`` ... ``()]``: brackets join neighbours, so the scanner works per
character, not per token.
"""

from __future__ import annotations

import ast
import json
import re

from ...registry import ToolParserManager
from ..base import Deltas, ToolParser
from ._xml_syntax import skip_ws

PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
_HEAD = re.compile(r"\s*([^\W\d][\w.]*)\s*\(")  # a (dotted) name and its "("
_HEAD_PREFIX = re.compile(r"\s*(?:[^\W\d][\w.]*\s*)?\Z")  # what may still become one
_LIST_END = re.compile(r"\s*\]")
_CODE = re.compile(r"[^'\"()\[\]{}]*")  # a run with no quote or bracket
_MAX_HEAD = 256  # a longer name is prose: a bound on what is held
_OPEN, _ELEMENT, _CALL, _AFTER = range(4)


class _CallScanner:
    """Finds the ``)`` that closes a call, over source fed in pieces.  Linear: string
    bodies are skipped with ``str.find``, other runs with one regex match.  What cannot be
    classified yet (a trailing backslash, or one or two quotes that may be a triple
    quote's start or end) is left unconsumed, so no state spans a half-seen delimiter."""

    __slots__ = ("depth", "quote")

    def reset(self) -> None:
        self.depth = 1  # just after the call's "("
        self.quote = ""  # the open string's delimiter: one or three quote characters

    def scan(self, text: str, pos: int, final: bool) -> tuple[int, bool]:
        """``(index after the call's ")", True)``, or ``(how far it is safe to consume, False)``."""
        n = len(text)
        while pos < n:
            if self.quote:
                pos = self._string(text, pos, n, final)
                if self.quote:
                    break
                continue
            pos = _CODE.match(text, pos).end()
            if pos == n:
                break
            c = text[pos]
            if c == "'" or c == '"':
                if text.startswith(c * 3, pos):
                    self.quote, pos = c * 3, pos + 3
                elif not final and n - pos < 3 and text.count(c, pos) == n - pos:
                    break  # maybe the start of a triple quote
                else:
                    self.quote, pos = c, pos + 1
                continue
            pos += 1
            self.depth += 1 if c in "([{" else -1
            if self.depth == 0:
                return pos, True
        return pos, False

    def _string(self, text: str, pos: int, n: int, final: bool) -> int:
        quote = self.quote
        end = text.find(quote, pos)
        while True:
            backslash = text.find("\\", pos, n if end == -1 else end)
            if backslash == -1:
                break
            if backslash + 1 == n:
                return n if final else backslash
            pos = backslash + 2
            if -1 < end < pos:
                end = text.find(quote, pos)
        if end != -1:
            self.quote = ""
            return end + len(quote)
        held = 0
        while len(quote) == 3 and not final and held < 2 and n - 1 - held >= pos and text[n - 1 - held] == quote[0]:
            held += 1  # quotes that may begin the closing delimiter
        return n - held


def call_arguments(source: str) -> tuple[str | None, str]:
    """``(JSON arguments, "")`` of one call's source, or ``(None, why it is no tool call)``."""
    try:
        call = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, "not Python call syntax"
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None, "not a function call"
    if call.args:
        return None, "positional argument"
    pairs = []
    for kw in call.keywords:
        if kw.arg is None:
            return None, "** argument"
        try:
            value = json.dumps(ast.literal_eval(kw.value), ensure_ascii=False, allow_nan=False)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None, f"argument {kw.arg!r} is not a literal with a JSON form"
        pairs.append(f"{json.dumps(kw.arg, ensure_ascii=False)}: {value}")
    return "{" + ", ".join(pairs) + "}", ""


@ToolParserManager.register_module(["pythonic", "llama4-pythonic"])
class PythonicToolParser(ToolParser):
    tool_open_tags = (PYTHON_START,)
    tool_close_tag = PYTHON_END  # optional: a bare list simply ends at its "]"
    bare_start = True
    bare_start_chars = "["

    def _reset_payload(self) -> None:
        self._phase = _OPEN
        self._scanner = _CallScanner()
        self._name = ""
        self._source: list[str] = []  # the current call's source, as it arrived
        self._deferred: list[tuple[str, str]] = []  # invalid calls before the block held a call

    def _consume_stream_payload(self, text: str, deltas: Deltas, *, final: bool) -> int:
        pos, n = 0, len(text)
        while not (self._payload_closed or self.rejected):
            phase = self._phase
            if phase == _CALL:
                end, closed = self._scanner.scan(text, pos, final)
                self._source.append(text[pos:end])
                pos = end
                if not closed:
                    return pos
                self._finish_call(deltas)
                self._phase = _AFTER
            elif phase == _ELEMENT:
                head = _HEAD.match(text, pos)
                if head is not None:
                    self._name = head.group(1)
                    self._source = [self._name, "("]
                    self._scanner.reset()
                    self._phase = _CALL
                    pos = head.end()
                elif (close := _LIST_END.match(text, pos)) is not None:
                    self._payload_closed = True
                    pos = close.end()
                elif not final and n - pos <= _MAX_HEAD and _HEAD_PREFIX.match(text, pos):
                    return pos
                else:
                    self._reject(deltas)  # not a call: the block is text, or ends here
            else:
                start = skip_ws(text, pos)
                if start == n:
                    return pos
                c = text[start]
                if phase == _OPEN and c == "[":
                    self._phase, pos = _ELEMENT, start + 1
                elif phase == _AFTER and c == ",":
                    self._phase, pos = _ELEMENT, start + 1
                elif phase == _AFTER and c == "]":
                    self._payload_closed, pos = True, start + 1
                else:
                    self._reject(deltas)
        return pos

    def _finish_call(self, deltas: Deltas) -> None:
        arguments, reason = call_arguments("".join(self._source))
        self._source = []
        if arguments is None:
            self._invalid(self._name, reason)
            return
        for name, why in self._deferred:  # the block holds a call now: they were calls too
            self._record_drop(name, why)
        self._deferred = []
        self._begin_call()
        self._emit_delta(deltas, name=self._name)
        self._emit_delta(deltas, arguments=arguments)
        self._end_call(deltas)

    def _invalid(self, name: str, reason: str) -> None:
        if self.committed:
            self._record_drop(name, reason)
        else:
            self._deferred.append((name, reason))

    def _record_drop(self, name: str, reason: str) -> None:
        self._begin_call()
        self._drop(name, reason)
        self._end_call(None)

    def _finish_payload(self, deltas: Deltas) -> None:
        if self._phase == _CALL:
            self._invalid(self._name, "cut off by the end of input")
            self._phase = _AFTER
        super()._finish_payload(deltas)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        if not calls:
            return ""
        return "[" + ", ".join(
            f"{name}({', '.join(f'{k}={python_literal(v)}' for k, v in json.loads(arguments).items())})"
            for name, arguments in calls
        ) + "]"


def python_literal(value) -> str:
    """Python source of a JSON value; a JSON string literal reads the same in Python."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)  # numbers, True, False, None
