"""The Harmony header grammar as openai-harmony reads it, for the text path (tests check they agree)."""

from __future__ import annotations

from typing import Final

import re

from .markers import CHANNEL, CONSTRAIN

__all__ = ["parse_header", "function_name"]

_FUNCTIONS: Final = "functions."
_ROLES: Final = frozenset(("user", "assistant", "system", "developer", "tool"))
# Rust's char::is_whitespace and u8::is_ascii_whitespace, which openai-harmony's header
# parser uses (Python's str.split and str.strip disagree on a few control characters).
_UNICODE_WS: Final = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + (
    "".join(map(chr, range(0x2000, 0x200B))))
_CHANNEL_VALUE: Final = re.compile(f"[^<{_UNICODE_WS}]*")
_ASCII_SPLIT: Final = re.compile("[ \t\n\x0c\r]+")


def parse_header(header: str, role_known: bool = True) -> tuple[str | None, str | None] | None:
    """``(channel, recipient)`` of a message header as openai-harmony reads it, or None
    where it raises.  ``header`` is the text between the start marker (or the reply's
    start, ``role_known``) and ``<|message|>``, special markers written out."""
    channel = None
    at = header.find(CHANNEL)
    if at != -1:
        after = header[at + len(CHANNEL) :]
        channel = _CHANNEL_VALUE.match(after).group()  # type: ignore[union-attr]  # `*` always matches
        if not channel:
            return None
        header = header[:at] + after[len(channel) :]
    header = header.strip(_UNICODE_WS)
    if CONSTRAIN in header:  # `to=x<|constrain|>json` is two words
        header = header.replace(CONSTRAIN, " " + CONSTRAIN).strip(_UNICODE_WS)
    parts = [p for p in _ASCII_SPLIT.split(header) if p]
    if not role_known:
        role = _role(parts)
        if role is None:
            return None
    else:
        role = "assistant"
    if parts and parts[0] == role:
        del parts[0]
    return _recipient(parts, channel)


def _role(parts: list[str]) -> str | None:
    """The author of a header opened by ``<|start|>``; None where openai-harmony rejects it.
    An unknown author addressing someone is a tool's message: its word is removed."""
    if not parts:
        return None
    if parts[0] in _ROLES:
        return parts[0]
    if len(parts) > 1 or parts[0].startswith("to="):
        del parts[0]
        return "tool"
    return None


def _recipient(parts: list[str], channel: str | None) -> tuple[str | None, str | None] | None:
    """The header's words after the role: ``[to=]RECIPIENT [CONTENT_TYPE]``."""
    recipient = None
    if parts:
        count = len(parts)
        last = parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif count == 1:
            recipient = last
        else:  # `last` is the content type; the word before it is the recipient
            raw = parts.pop()
            recipient = raw[3:] if raw.startswith("to=") else raw
        if parts:
            return None  # words left over: openai-harmony rejects the header
    return channel, recipient


def function_name(recipient: str | None) -> str | None:
    """The tool name a recipient addresses (``functions.bash<|channel|>commentary`` ->
    ``bash``); ``""`` for a bare ``functions.``; None when it is not a function."""
    if not recipient:
        return None
    clean = recipient.split("<|", 1)[0].strip()
    return clean[len(_FUNCTIONS) :] if clean.startswith(_FUNCTIONS) else None
