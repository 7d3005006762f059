"""Small recognizers shared by the dialects' hooks (pure functions of text and position).

Readers return ``(value, index after it)``, None when the text has not all arrived, or
MALFORMED when it is not the expected syntax: the driver's own verdicts, so a hook
passes a reader's ``not found`` on as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from ...markers import held_prefix_start
from ...markers import skip_ws as skip_ws  # the dialects take it from here
from ..xml import MALFORMED, ArgStartStep, Found, FunctionStep


def at_partial(text: str, pos: int, *markers: str) -> bool:
    """Whether the rest of ``text`` from ``pos`` is a proper prefix of one of ``markers``."""
    rest = len(text) - pos
    return any(rest < len(m) and m.startswith(text[pos:]) for m in markers)


def read_until(text: str, pos: int, stop: str, forbidden: str = "<\n") -> Found[tuple[str, int]]:
    """The text between ``pos`` and ``stop``: ``(value, index after stop)``, None if ``stop``
    has not arrived yet, or MALFORMED if a forbidden character comes first."""
    end = text.find(stop, pos)
    region = text[pos : held_prefix_start(text, stop, pos)] if end == -1 else text[pos:end]
    if any(c in region for c in forbidden):
        return MALFORMED
    if end == -1:
        return None
    return region, end + len(stop)


def read_attribute(text: str, pos: int, stop: str = ">") -> Found[tuple[str, int]]:
    """An attribute value written ``"V"``, ``'V'`` or bare, then ``stop``: ``(V, index
    after stop)``, None if it has not all arrived, or MALFORMED if it is not one."""
    if pos >= len(text):
        return None
    quote = text[pos]
    if quote not in "\"'":
        found = read_until(text, pos, stop)
        return (found[0].strip(), found[1]) if found else found
    found = read_until(text, pos + 1, quote)
    if not found:
        return found
    value, pos = found
    pos = skip_ws(text, pos)
    if pos == len(text):
        return None
    return (value, pos + len(stop)) if text.startswith(stop, pos) else MALFORMED


def function_hook(
    payload: str, pos: int, opener: str, read_name: Callable[[str, int], Found[tuple[str, int]]]
) -> Found[FunctionStep]:
    """The usual ``_consume_function``: ``opener``, then a name read by ``read_name`` at the
    position after it; anything else (the block's close tag, text) ends the payload."""
    start, pos = pos, skip_ws(payload, pos)
    if payload.startswith(opener, pos):
        found = read_name(payload, pos + len(opener))
        if not found:
            return found
        name, pos = found
        name = name.strip()
        return (pos, name, "arg_start") if name else MALFORMED
    if pos == len(payload) or at_partial(payload, pos, opener):
        return None
    return start, None, "done"  # the whitespace is the block's close tag's business


def arg_start_hook(
    payload: str, pos: int, parameter: str, end_function: str, block_close: str
) -> Found[ArgStartStep]:
    """The usual ``_consume_arg_start``: a parameter opens, the function closes, or the
    block's close tag ends a function whose own close tag never came (left unconsumed)."""
    pos = skip_ws(payload, pos)
    if payload.startswith(parameter, pos):
        return pos, "arg_name"
    if payload.startswith(end_function, pos):
        return pos + len(end_function), "done"
    if payload.startswith(block_close, pos):
        return pos, "done"
    if pos == len(payload) or at_partial(payload, pos, parameter, end_function, block_close):
        return None
    return MALFORMED


def key_value_hook(payload: str, pos: int, key_close: str, value_open: str) -> Found[tuple[int, str]]:
    """GLM-style pairs: the key from ``pos`` (just after the key's open tag) to ``key_close``,
    then ``value_open`` after optional layout: ``(position of the value, key)``."""
    found = read_until(payload, pos, key_close, forbidden="<")
    if not found:
        return found
    key, pos = found
    pos = skip_ws(payload, pos)
    if payload.startswith(value_open, pos):
        return pos + len(value_open), key.strip()
    if pos == len(payload) or at_partial(payload, pos, value_open):
        return None
    return MALFORMED
