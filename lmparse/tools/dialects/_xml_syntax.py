"""Small recognizers shared by the XML-like dialects' hooks (pure functions of text and position)."""

from __future__ import annotations

from ...markers import WHITESPACE, held_prefix_start


def skip_ws(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in WHITESPACE:
        pos += 1
    return pos


def at_partial(text: str, pos: int, *markers: str) -> bool:
    """Whether the rest of ``text`` from ``pos`` is a proper prefix of one of ``markers``."""
    rest = len(text) - pos
    return any(rest < len(m) and m.startswith(text[pos:]) for m in markers)


def read_until(text: str, pos: int, stop: str, forbidden: str = "<\n"):
    """The text between ``pos`` and ``stop``: ``(value, index after stop)``, None if ``stop``
    has not arrived yet, or False if a forbidden character comes first."""
    end = text.find(stop, pos)
    region = text[pos : held_prefix_start(text, stop, pos)] if end == -1 else text[pos:end]
    if any(c in region for c in forbidden):
        return False
    if end == -1:
        return None
    return region, end + len(stop)


def read_attribute(text: str, pos: int, stop: str = ">"):
    """An attribute value written ``"V"``, ``'V'`` or bare, then ``stop``: ``(V, index
    after stop)``, None if it has not all arrived, or False if it is not one."""
    if pos >= len(text):
        return None
    quote = text[pos]
    if quote not in "\"'":
        found = read_until(text, pos, stop)
        return found and (found[0].strip(), found[1])
    found = read_until(text, pos + 1, quote)
    if not found:
        return found
    value, pos = found
    pos = skip_ws(text, pos)
    if pos == len(text):
        return None
    return (value, pos + len(stop)) if text.startswith(stop, pos) else False
