"""A custom tool's free-form input, decoded as the model's JSON arguments stream in.

lmparse offers a custom tool to the model as a function with one string argument, so the
parsers emit its call as JSON-prefix fragments of ``{"input": "..."}``.  Responses clients
expect the raw text (``custom_tool_call_input.delta``): ``CustomInput.feed`` decodes the
first string value as it grows, holding back only an escape sequence cut in two.  The
final ``input`` is read from the whole arguments once they are complete.
"""

from __future__ import annotations

import json
import re

__all__ = ["CustomInput", "final_input"]

# The opening of the first value: `{`, a key, `:`, and the value's first character.
_VALUE_START = re.compile(r'\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*(\S)', re.S)
_STRING_SPECIAL = re.compile(r'["\\]')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_GIVE_UP = 4096  # a value that has not started after this many characters is not a string

_BEFORE, _INSIDE, _AFTER = 0, 1, 2


class CustomInput:
    __slots__ = ("_state", "_held", "decoded")

    def __init__(self) -> None:
        self._state = _BEFORE
        self._held = ""
        self.decoded: list[str] = []

    def feed(self, fragment: str) -> str:
        """The input text that ``fragment`` completes (``""`` while nothing new is settled)."""
        if self._state == _AFTER:
            return ""
        text, self._held = self._held + fragment, ""
        pos = 0
        if self._state == _BEFORE:
            m = _VALUE_START.match(text)
            if m is None:
                if len(text) > _GIVE_UP:
                    self._state = _AFTER
                else:
                    self._held = text
                return ""
            if m.group(1) != '"':
                self._state = _AFTER
                return ""
            self._state, pos = _INSIDE, m.end()
        out = []
        while True:
            m = _STRING_SPECIAL.search(text, pos)
            if m is None:
                out.append(text[pos:])
                break
            at = m.start()
            out.append(text[pos:at])
            if text[at] == '"':
                self._state = _AFTER
                break
            decoded, length = _escape(text, at)
            if length == 0:  # cut off: wait for the rest
                self._held = text[at:]
                break
            out.append(decoded)
            pos = at + length
        piece = "".join(out)
        if piece:
            self.decoded.append(piece)
        return piece


def _escape(text: str, at: int) -> tuple[str, int]:
    """The escape sequence at ``text[at]`` (a backslash): ``(decoded, length)``, length 0 if cut."""
    if at + 1 >= len(text):
        return "", 0
    kind = text[at + 1]
    if kind != "u":
        return _ESCAPES.get(kind, kind), 2
    if at + 6 > len(text):
        return "", 0
    if not _HEX4.fullmatch(text, at + 2, at + 6):
        return text[at:at + 2], 2
    code = int(text[at + 2:at + 6], 16)
    if not 0xD800 <= code < 0xE000:
        return chr(code), 6
    if code < 0xDC00:  # a high surrogate: its low half follows as \uDC00-\uDFFF
        low = text[at + 6:at + 12]
        if len(low) < 6 and "\\u".startswith(low[:2]):
            return "", 0  # the low half may still come
        if low.startswith("\\u") and _HEX4.fullmatch(low, 2) and 0xDC00 <= int(low[2:], 16) < 0xE000:
            return chr(0x10000 + ((code - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00)), 12
    return "\ufffd", 6  # a lone surrogate is not text


def final_input(arguments: str, streamed: CustomInput) -> str:
    """The input once the arguments are complete: their ``input`` string (or their one
    value), else what was decoded, else the arguments as written.  Always valid text: an
    escaped lone surrogate becomes U+FFFD, as it did in the deltas."""
    value = _final_value(arguments, streamed)
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _final_value(arguments: str, streamed: CustomInput) -> str:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return "".join(streamed.decoded) if streamed.decoded else arguments
    if isinstance(value, dict):
        if isinstance(value.get("input"), str):
            return value["input"]
        if len(value) == 1:
            only = next(iter(value.values()))
            return only if isinstance(only, str) else json.dumps(only, ensure_ascii=False)
        return arguments if value else ""
    return value if isinstance(value, str) else arguments
