"""JsonToolParser: calls written as JSON envelopes ``{"<name_field>": ..., "<argument_field>": {...}}``.

The envelope is recognized key by key.  The argument value's source text is
forwarded verbatim as soon as the scanner has passed it; other values are only
scanned far enough to find the next envelope field.  The first ``name`` wins; a
repeated or foreign argument field is skipped; an envelope with no argument field
gets ``{}``.  With ``name_is_key`` an envelope is ``{"NAME": {ARGS}}`` (its first key
is the name, its value the arguments).  A block may hold several envelopes, one after
another (optionally separated by ``call_separator``) or as a JSON array.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

from ..markers import WHITESPACE
from .base import MORE, PAYLOAD_CLOSED, RUN, Events, Payload, PayloadStep
from .json_arguments import JsonArguments, JsonRunLane
from .json_scanner import JsonValueScanner
from .._mypyc import mypyc_attr

__all__ = ["JsonToolParser"]

# Envelope phases (``_SEPARATOR``: after a call of a dialect with a ``call_separator``).
_START: Final = 0
_KEY_OR_END: Final = 1
_KEY: Final = 2
_COLON: Final = 3
_VALUE_START: Final = 4
_VALUE: Final = 5
_ARGUMENTS: Final = 6
_AFTER_VALUE: Final = 7
_SEPARATOR: Final = 8
# What a value other than the arguments is scanned for.
_SKIP: Final = 0
_NAME: Final = 1


def _skip_ws(text: str, pos: int, n: int) -> int:
    while pos < n and text[pos] in WHITESPACE:
        pos += 1
    return pos


@mypyc_attr(allow_interpreted_subclasses=True)
class JsonToolParser(JsonRunLane):
    argument_field: ClassVar[str] = "arguments"
    # other keys read as the arguments (Inkling's ``arguments``)
    argument_aliases: ClassVar[frozenset[str]] = frozenset()
    name_field: ClassVar[str] = "name"  # the key holding the function name (Cohere's ``tool_name``)
    # ``{"NAME": {ARGS}}``: an envelope's first key is the name, its value the arguments (Apertus).
    name_is_key: ClassVar[bool] = False
    call_separator: ClassVar[str | None] = None  # e.g. ";" between Llama 3 calls
    # Keys a bare-start envelope may begin with; anything else is ordinary JSON content.
    envelope_keys: ClassVar[frozenset[str]] = frozenset(("name", "arguments", "parameters", "type"))

    def _reset_payload(self) -> None:
        self._phase = _START
        self._scanner = JsonValueScanner()
        self._arguments = JsonArguments(self._calls)
        self._parts: list[str] = []
        self._key = ""
        self._role = _SKIP
        self._envelopes = 0
        self._in_array = False
        self._name_seen = False
        self._args_seen = False

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        pos = 0
        n = len(text)
        while True:
            phase = self._phase
            if phase == _ARGUMENTS:  # the hot path: inside the arguments value (kept inline)
                arguments = self._arguments
                pos = arguments.consume(text, pos, events, final)
                if not arguments.scanner.done:
                    return pos, RUN if arguments.in_run else MORE
                if arguments.scanner.broken:
                    return pos, self._reject(events)
                arguments.flush(events)
                self._phase = _AFTER_VALUE
                continue
            if phase == _VALUE:
                pos, status = self._in_value(text, pos, events, final)
            elif phase == _KEY:
                pos, status = self._in_key(text, pos, events, final)
            else:  # a punctuation phase: the next character after whitespace decides
                start, pos = pos, _skip_ws(text, pos, n)
                if phase == _SEPARATOR and pos > start and (pos >= n or not self._is_separator(text[pos])):
                    # Whitespace after a call is the block's only before a separator: held
                    # until what follows decides, else text after the last call.
                    return start, PAYLOAD_CLOSED if pos < n or final else MORE
                if pos >= n:
                    return pos, MORE
                pos, status = _PUNCTUATION[phase](self, text[pos], pos, events)
            if status is not None:
                return pos, status

    # ---- the scanning phases: (new position, None to go on or the payload's status) ----

    def _in_value(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, Payload | None]:
        """A name, or a field only passed over."""
        scanner = self._scanner
        end = scanner.scan(text, pos, final)
        if self._role == _NAME:
            self._parts.append(text[pos:end])
        if not scanner.done:
            return end, MORE
        if scanner.broken:
            return end, self._reject(events)
        if self._role == _NAME:
            self._finish_name(events)
        self._phase = _AFTER_VALUE
        return end, None

    def _in_key(self, text: str, pos: int, events: Events, final: bool) -> tuple[int, Payload | None]:
        """Inside a key string: whitespace is part of it."""
        scanner = self._scanner
        end = scanner.scan(text, pos, final)
        self._parts.append(text[pos:end])
        if not scanner.done:
            return end, MORE
        key = self._decode_parts()
        if not isinstance(key, str) or (key not in self.envelope_keys and self.bare and not self.committed):
            return end, self._reject(events)
        self._key = key
        self._phase = _COLON
        return end, None

    # ---- the punctuation phases: the character at ``pos`` decides ----------------------

    def _at_start(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        """Before an envelope: it opens, an array opens or closes, a separator, or the end."""
        if c == "{":
            self._begin_call()
            self._name_seen = self._args_seen = False
            self._phase = _KEY_OR_END
            return pos + 1, None
        if c == "[" and not self._in_array and self._envelopes == 0:
            self._in_array = True
            return pos + 1, None
        if self._in_array and c == "]":
            return pos + 1, PAYLOAD_CLOSED
        if self._envelopes and self._is_separator(c):
            return pos + 1, None
        if self._envelopes:
            return pos, PAYLOAD_CLOSED  # whatever follows is not ours
        return pos, self._reject(events)

    def _is_separator(self, c: str) -> bool:
        return c == "," or c == self.call_separator

    def _at_separator(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        """After a call: a separator, another call follows; anything else is not ours."""
        if self._is_separator(c):
            self._phase = _START
            return pos + 1, None
        return pos, PAYLOAD_CLOSED

    def _at_key_or_end(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        if c == '"':
            self._scanner.reset()
            self._parts = []
            self._phase = _KEY
            return pos, None
        if c == "}":
            return pos + 1, self._end_envelope(events)
        if c == ",":
            return pos + 1, None
        return pos, self._reject(events)

    def _at_colon(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        if c != ":":
            return pos, self._reject(events)
        self._phase = _VALUE_START
        return pos + 1, None

    def _at_value_start(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        """The key decides how its value is read: arguments, the name, or passed over."""
        key = self._key
        if self.name_is_key and not self._name_seen:
            self._name_seen = True
            if key:
                self._emit_name(events, key)
            else:
                self._drop(events, None, "function name is not a non-empty string")
            key = self.argument_field
        if (key == self.argument_field or key in self.argument_aliases) and not self._args_seen:
            self._args_seen = True
            self._arguments.reset()
            self._phase = _ARGUMENTS
            return pos, None
        if key == self.name_field and not self._name_seen:
            self._name_seen = True
            self._role = _NAME
        else:
            self._role = _SKIP
        self._scanner.reset()
        self._parts = []
        self._phase = _VALUE
        return pos, None

    def _at_after_value(self, c: str, pos: int, events: Events) -> tuple[int, Payload | None]:
        if c == ",":
            self._phase = _KEY_OR_END
            return pos + 1, None
        if c == "}":
            return pos + 1, self._end_envelope(events)
        return pos, self._reject(events)

    def _decode_parts(self) -> Any:
        raw = "".join(self._parts)
        self._parts = []
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _finish_name(self, events: Events) -> None:
        name = self._decode_parts()
        if isinstance(name, str) and name:
            self._emit_name(events, name)
        else:
            self._drop(events, None, "function name is not a non-empty string")

    def _end_envelope(self, events: Events) -> Payload | None:
        """An envelope's ``}``: None to go on, or the payload's status."""
        if not self._calls.named and self.bare and not self.committed:
            return self._reject(events)  # a bare JSON object with no name is content, not a call
        self._end_call(events)
        self._envelopes += 1
        self._phase = _START
        if not self._in_array and self.tool_close_tag is None:
            if self.call_separator is None:
                return PAYLOAD_CLOSED
            self._phase = _SEPARATOR
        return None

    def _finish_payload(self, events: Events) -> Payload:
        if self._phase == _ARGUMENTS:
            self._arguments.flush(events, complete=False)  # truncated: as written
        return super()._finish_payload(events)

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        # Qwen and InternLM templates put one newline between consecutive blocks.
        return "\n".join(cls.render_call(name, args) for name, args in calls)

    # How one call is written on the wire (the official chat template's layout).
    render_template: ClassVar[str] = "{open}\n{body}\n{close}"

    @classmethod
    def render_call(cls, name: str, arguments: str) -> str:
        body = f'{{"name": {json.dumps(name, ensure_ascii=False)}, "{cls.argument_field}": {arguments}}}'
        return cls.render_template.format(open=cls.tool_open_tags[0], body=body, close=cls.tool_close_tag or "")


_PUNCTUATION: Final = {
    _START: JsonToolParser._at_start,
    _KEY_OR_END: JsonToolParser._at_key_or_end,
    _COLON: JsonToolParser._at_colon,
    _VALUE_START: JsonToolParser._at_value_start,
    _AFTER_VALUE: JsonToolParser._at_after_value,
    _SEPARATOR: JsonToolParser._at_separator,
}
