"""SoftBank Sarashina: ``<|tool_calls|>[{'name': 'N', 'arguments': {...}}, ...]``.

A Python-literal list of dicts (single quotes, ``True`` / ``False`` / ``None``), after the
``<|tool_calls|>`` marker; a single dict after the marker is a call too.  The marker is a
special token that detokenization usually strips, so a reply whose first non-blank text is a
list opening with a dict (``[{``) is a candidate block as well (bare start; SMG's rule).  No
chat template or vocabulary is known (PROTOCOLS.md: SMG's ``sarashina.rs`` and its tests).

Each element is scanned to its closing ``}`` (``CallScanner``: brackets and string literals,
escapes included), read with ``ast`` (never evaluated; JSON's ``true`` / ``false`` / ``null``
are read too) and emitted whole: identity, then its ``arguments`` as JSON.

Validity: a block whose first element is not a dict with a string ``name`` (``[1, 2, 3]``, a
dict of something else), or whose marker is followed by neither, is text as written, the
marker too (``See the <|tool_calls|> tag.``: lmparse's rule for every dialect, where SMG drops
the marker).  A block cut off by the end of the reply after the marker is a ``dropped``
record, never content.  Once the block holds a call, a later element that is not a call is dropped and
recorded, and anything after the last element other than ``,`` / ``]`` ends the block.
"""

from __future__ import annotations

from typing import ClassVar, Final

import json

from ..base import MORE, PAYLOAD_CLOSED, Events, Payload, PayloadStep, ToolParser
from ..python_call import CallScanner, literal_value
from ._syntax import skip_ws
from ..._mypyc import mypyc_attr

MARKER: Final = "<|tool_calls|>"
LIST_OPEN: Final = "["
LIST_CLOSE: Final = "]"
SEPARATOR: Final = ", "
_MAX_GAP: Final = 64  # whitespace between "[" and its first "{" held before the list is judged not a call list
_OPEN: Final = 0
_ELEMENT: Final = 1
_DICT: Final = 2
_AFTER: Final = 3


@mypyc_attr(allow_interpreted_subclasses=True)
class SarashinaToolParser(ToolParser):
    summary = "<|tool_calls|>[{'name': N, 'arguments': {…}}, …] (Python literals), or a leading bare [{…}]"
    streaming = "each call whole (identity, then its arguments) once its '}' arrives"
    tool_open_tags = (MARKER,)
    tool_close_tag = None  # the list (or the dict) ends the block
    bare_start = True
    bare_start_chars = LIST_OPEN
    # No template to read the layout from: content before the marker is text as written, and
    # whitespace between two blocks is theirs.
    block_lead = ""
    block_separator: ClassVar[str | None] = None

    def _reset_payload(self) -> None:
        self._phase = _OPEN
        self._scanner = CallScanner()
        self._source: list[str] = []  # the current element's source, as it arrived
        self._single = False  # the block is one dict, not a list

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos, n = 0, len(text)
        while True:
            phase = self._phase
            if phase == _DICT:
                end, closed = self._scanner.scan(text, pos, final)
                self._source.append(text[pos:end])
                pos = end
                if not closed:
                    return pos, MORE
                if not self._finish_element(events):
                    return pos, self._reject(events)  # the first element is no call: the block is text
                if self._single:
                    return pos, PAYLOAD_CLOSED
                self._phase = _AFTER
                continue
            start = skip_ws(text, pos)
            if start == n:
                # At the end of the reply, whitespace inside a list that holds a call is its own.
                return (n if final and self.committed and phase != _OPEN else pos), MORE
            c = text[start]
            if phase == _OPEN:
                if c == "{" and not self.bare:
                    self._single = True
                    pos = self._open_element(start)
                    continue
                if c != LIST_OPEN:
                    return pos, self._reject(events)
                first = skip_ws(text, start + 1)
                if first == n:  # "[" and whitespace: the first element decides (held, bounded)
                    return (pos, MORE) if n - start <= _MAX_GAP else (pos, self._reject(events))
                if text[first] != "{":
                    return pos, self._reject(events)
                pos = self._open_element(first)
            elif phase == _ELEMENT:
                if c == "{":
                    pos = self._open_element(start)
                elif c == LIST_CLOSE:  # a trailing comma
                    return start + 1, PAYLOAD_CLOSED
                else:
                    return pos, PAYLOAD_CLOSED  # not an element: the block ends after its last call
            elif c == ",":
                self._phase, pos = _ELEMENT, start + 1
            elif c == LIST_CLOSE:
                return start + 1, PAYLOAD_CLOSED
            else:
                return pos, PAYLOAD_CLOSED  # whatever follows the last call is not ours

    def _open_element(self, at: int) -> int:
        """A dict opens at ``at``: scanned from after its ``{``."""
        self._scanner.reset()
        self._source = ["{"]
        self._phase = _DICT
        return at + 1

    def _finish_element(self, events: Events) -> bool:
        """The element's source is complete: a call (emitted whole), or a dropped record once
        the block holds a call; False when it is no call and the block holds none."""
        ok, value = literal_value("".join(self._source), json_constants=True)
        self._source = []
        name = value.get("name") if ok and isinstance(value, dict) else None
        if not isinstance(name, str) or not name:
            return self._invalid(events, None, "not a dict with a string 'name'")
        arguments = value.get("arguments", {}) if isinstance(value, dict) else None
        if not isinstance(arguments, dict):
            return self._invalid(events, name, "'arguments' is not a dict")
        try:
            source = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return self._invalid(events, name, "'arguments' holds a value with no JSON form")
        self._begin_call()
        self._emit_name(events, name)
        self._calls.arguments(events, source)
        self._end_call(events)
        return True

    def _invalid(self, events: Events, name: str | None, reason: str) -> bool:
        if not self.committed:
            return False
        self._begin_call()
        self._drop(events, name, reason)
        self._end_call(events)
        return True

    def _finish_payload(self, events: Events) -> Payload:
        if self._phase == _DICT and self.committed:  # a later element cut off by the end: syntax
            self._invalid(events, None, "cut off by the end of input")
            self._phase = _AFTER
        return super()._finish_payload(events)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        if not calls:
            return ""
        body = SEPARATOR.join(repr({"name": name, "arguments": json.loads(arguments)}) for name, arguments in calls)
        return f"{MARKER}{LIST_OPEN}{body}{LIST_CLOSE}"
