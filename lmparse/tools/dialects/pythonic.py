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
``[print(x)]``, a bare list's first call cut off by the end of input) is text exactly as
written; after ``<|python_start|>`` a first call cut off is syntax (``dropped``).
Once a block holds a call (or a call to a name the request does not expose), the
other calls that are not tool calls -- positional or ``**`` arguments, a value that is
not a literal with a JSON form (names, expressions, bytes, sets, complex, inf/nan), cut
off by the end of input -- are dropped and recorded in ``dropped`` with their source, and
an element that is not call-shaped at all (``(a=1)``, ``2``) is skipped to the ``,`` or
``]`` after it and recorded (``recovery.MALFORMED_CALL``; issue 23 rule 2), so the calls
after it still parse.  Before the block holds a call such elements are held: inside the
wrapper they are recorded once a call follows, a bare list whose first element is no call
is text.  With no separator within ``recovery.SKIP_LIMIT`` characters the block ends where
the element began (the rest is text).

Tokenization: the wrapper tags are single special tokens of Llama 4, whose tokenizer we
do not have.  In Llama 3.2 the list tokenizes as ``[``, ``get``, ``_weather``, ``(city``,
``="``, ... ``),`` ... ``()]``: brackets join neighbours, so the scanner works per
character, not per token.
"""

from __future__ import annotations

from typing import ClassVar, Final

import json
import re

from ..base import MORE, PAYLOAD_CLOSED, DroppedCall, Events, Payload, PayloadStep, ToolParser
from ..python_call import CallScanner, call_arguments, python_literal
from ..recovery import MALFORMED_CALL, SKIP_LIMIT
from ..syntax import CallSyntax
from ._syntax import skip_ws
from ..._mypyc import mypyc_attr

PYTHON_START: Final = "<|python_start|>"
PYTHON_END: Final = "<|python_end|>"
# The list as written: "[" call(k=v, ...), call() "]".
LIST_OPEN: Final = "["
LIST_CLOSE: Final = "]"
SEPARATOR: Final = ", "
_HEAD: Final = re.compile(r"\s*([^\W\d][\w.]*)\s*\(")  # a (dotted) name and its "("
_HEAD_PREFIX: Final = re.compile(r"\s*(?:[^\W\d][\w.]*\s*)?\Z")  # what may still become one
_LIST_END: Final = re.compile(r"\s*\]")
_MAX_HEAD: Final = 256  # a longer name is prose: a bound on what is held
_OPEN: Final = 0
_ELEMENT: Final = 1
_CALL: Final = 2
_AFTER: Final = 3
_SKIP: Final = 4


@mypyc_attr(allow_interpreted_subclasses=True)
class PythonicToolParser(ToolParser):
    summary = "[NAME(k=V, …), …], optionally inside <|python_start|> … <|python_end|>"
    streaming = "each call whole (identity, then its arguments) once its ')' arrives"
    tool_open_tags = (PYTHON_START,)
    block_separator: ClassVar[str | None] = None  # no Llama 4 template in the test data to read it from
    tool_close_tag = PYTHON_END  # optional: a bare list simply ends at its "]"
    bare_start = True
    bare_start_chars = LIST_OPEN
    json_constants: ClassVar[bool] = False  # ``true`` / ``false`` / ``null`` read as literals too (LFM2)

    def _reset_payload(self) -> None:
        self._phase = _OPEN
        self._scanner = CallScanner()
        self._name = ""
        self._source: list[str] = []  # the current call's source, as it arrived
        self._deferred: list[tuple[str | None, str, str]] = []  # invalid calls before the block held a call
        self._skip_from = self._skip_seen = 0  # the malformed element being skipped: its start, how far it was scanned

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos, n = 0, len(text)
        while True:
            phase = self._phase
            if phase == _CALL:
                end, closed = self._scanner.scan(text, pos, final)
                self._source.append(text[pos:end])
                pos = end
                if not closed:
                    return pos, MORE
                self._finish_call(events)
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
                    return close.end(), PAYLOAD_CLOSED
                elif n - pos <= _MAX_HEAD and _HEAD_PREFIX.match(text, pos):
                    if final and self.committed:  # a later call's head, cut off: syntax
                        if text[pos:].strip():
                            self._calls.cut(events, text[pos:])
                        return n, MORE
                    return pos, MORE
                elif self.bare and not self.committed:
                    return pos, self._reject(events)  # not a call: a bare list proves itself by its first call
                else:  # not a call: skipped to its separator (``_SKIP``)
                    self._scanner.reset(element=True)
                    self._phase, self._skip_from, self._skip_seen = _SKIP, pos, 0
            elif phase == _SKIP:
                start = self._skip_from
                end, found = self._scanner.scan(text, start + self._skip_seen, final)
                if found:
                    self._invalid(events, None, MALFORMED_CALL, text[start:end])
                    self._phase, pos = _AFTER, end
                elif final or end - start > SKIP_LIMIT:
                    self._phase = _AFTER
                    return start, self._reject(events)  # no separator: the block is text, or ends where it began
                else:
                    self._skip_from, self._skip_seen = 0, end - start  # the next text starts at ``start``
                    return start, MORE
            else:
                start = skip_ws(text, pos)
                if start == n:
                    return pos, MORE
                c = text[start]
                if phase == _OPEN and c == LIST_OPEN:
                    self._phase, pos = _ELEMENT, start + 1
                elif phase == _AFTER and c == ",":
                    self._phase, pos = _ELEMENT, start + 1
                elif phase == _AFTER and c == "]":
                    return start + 1, PAYLOAD_CLOSED
                else:
                    return pos, self._reject(events)

    def _finish_call(self, events: Events) -> None:
        source = "".join(self._source)
        arguments, reason = call_arguments(source, self.json_constants)
        self._source = []
        if arguments is None:
            self._invalid(events, self._name, reason, source)
            return
        for name, why, markup in self._deferred:  # the block holds a call now: they were calls too
            self._record_drop(events, name, why, markup)
        self._deferred = []
        self._begin_call()
        self._emit_name(events, self._name)
        self._calls.arguments(events, arguments)
        self._end_call(events)

    def _invalid(self, events: Events, name: str | None, reason: str, markup: str) -> None:
        """A call that is no tool call (``name`` None: an element that is no call at all):
        recorded, or held until the block holds a call (a block of such calls only is text)."""
        if self.committed:
            self._record_drop(events, name, reason, markup)
        else:
            self._deferred.append((name, reason, markup))

    def _record_drop(self, events: Events, name: str | None, reason: str, markup: str) -> None:
        self._begin_call()
        self._commit()
        self._calls.drop_record(events, DroppedCall(name, reason, markup))
        self._end_call(events)

    def _finish_payload(self, events: Events) -> Payload:
        if self._phase == _CALL:
            self._invalid(events, self._name, "cut off by the end of input", "".join(self._source))
            self._phase = _AFTER
        return super()._finish_payload(events)

    @classmethod
    def call_syntax(cls) -> CallSyntax:
        return CallSyntax("", "(", "python", ")", SEPARATOR, LIST_OPEN, LIST_CLOSE)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        if not calls:
            return ""
        return LIST_OPEN + SEPARATOR.join(
            f"{name}({SEPARATOR.join(f'{k}={python_literal(v)}' for k, v in json.loads(arguments).items())})"
            for name, arguments in calls
        ) + LIST_CLOSE
