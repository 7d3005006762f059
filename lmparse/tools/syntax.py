"""CallSyntax: a tool dialect's call syntax as data, for building generation constraints.

A dialect never restates its syntax for this: ``derive_call_syntax`` renders sentinel
calls with the dialect's own ``render`` (the layout its tests check against the official
chat templates) and cuts the result apart at the markers the parser itself reads
(``tool_open_tags``, ``tool_close_tag`` and, for XML arguments, ``parameter_open`` and
``function_close``).  So what a constraint forces is what the parser parses.

One call is ``before_name NAME after_name [DIGITS args_open] ARGUMENTS call_end``; calls
follow each other with ``separator`` between them, all inside ``section_open`` ...
``section_close`` when the dialect groups its calls in one block (Kimi, DeepSeek, DSML,
MiniMax).  ``arguments`` is ``"json"``, ``"python"`` (keyword arguments), ``"gemma"``
(object literals), the XGrammar name of an XML parameter style or ``"xml-inline"`` (a
``response_template``'s parameters, ``lmparse.response.template_syntax``), whose layout
``params`` spells out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, NamedTuple

__all__ = ["CallSyntax", "ParamSyntax", "derive_call_syntax"]

_NAME_1: Final = "lmparse_name_one"
_NAME_2: Final = "lmparse_name_two"
_KEY: Final = "lmparse_key"
_VALUE: Final = "lmparse_value"
_ARGS: Final = '{"lmparse_key": "lmparse_value"}'
_SLOT: Final = "\x00arguments\x00"  # where the arguments were, once cut out of a rendering


class ParamSyntax(NamedTuple):
    """One XML parameter: ``open KEY string_open TEXT close`` for a string,
    ``open KEY value_open JSON close`` for any other value."""

    open: str
    string_open: str
    value_open: str
    close: str


class CallSyntax(NamedTuple):
    before_name: str
    after_name: str
    arguments: str  # see the module docstring
    call_end: str
    separator: str = ""
    section_open: str = ""
    section_close: str = ""
    numbered: bool = False  # decimal digits, then ``args_open``, follow ``after_name`` (Kimi's NAME:IDX)
    args_open: str = ""
    params: ParamSyntax | None = None

    def call_begin(self, name: str) -> str:
        """The text before a call's arguments, up to its index if it is numbered."""
        return f"{self.before_name}{name}{self.after_name}"


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def _split(text: str, *pieces: str) -> list[str]:
    """``text`` cut at each of ``pieces`` in turn (each must occur)."""
    parts, rendering = [], text
    for piece in pieces:
        before, found, text = text.partition(piece)
        if not found:
            raise ValueError(f"the rendering {rendering!r} lacks {piece!r}")
        parts.append(before)
    return [*parts, text]


def _xml_params(cls: Any, one: str) -> tuple[str, ParamSyntax]:
    """The parameter text of ``one`` (a call rendered with one string argument) and its layout."""
    start = one.index(cls.parameter_open, one.index(_NAME_1) + len(_NAME_1))
    key = one.index(_KEY, start)
    value = one.index(_VALUE, key)
    end = one.index(cls.function_close, value)
    numeric = cls.render([(_NAME_1, '{"lmparse_key": 7}')])
    n_key = numeric.index(_KEY) + len(_KEY)
    params = ParamSyntax(one[start:key], one[key + len(_KEY):value], numeric[n_key:numeric.index("7", n_key)],
                         one[value + len(_VALUE):end])
    return one[start:end], params


def _array_lead(text: str) -> str:
    """``text`` past its leading whitespace and, if it opens one, a JSON array's ``[`` and whitespace."""
    rest = text.lstrip()
    return rest[1:].lstrip() if rest.startswith("[") else rest


def derive_call_syntax(cls: Any, arguments: str = "json", write: Callable[[str], str] | None = None) -> CallSyntax:
    """The syntax of ``cls`` (a tool parser class) read off its own renderings; ``write``
    says how the dialect writes JSON arguments when it writes them as another literal syntax."""
    one = cls.render([(_NAME_1, _ARGS)])
    two = cls.render([(_NAME_1, _ARGS), (_NAME_2, _ARGS)])
    params = None
    if write is not None:
        written = write(_ARGS)
        one, two = one.replace(written, _SLOT), two.replace(written, _SLOT)
    elif arguments != "json":
        written, params = _xml_params(cls, one)
        one, two = one.replace(written, _SLOT), two.replace(written, _SLOT)
    else:
        one, two = one.replace(_ARGS, _SLOT), two.replace(_ARGS, _SLOT)
    head, after_1, tail = _split(one, _NAME_1, _SLOT)
    _, after_1b, middle, after_2, _ = _split(two, _NAME_1, _SLOT, _NAME_2, _SLOT)
    opener = next(iter(cls.tool_open_tags), "")
    grouped = bool(opener) and two.count(opener) == 1 and head.startswith(opener)
    # Layout right after the section's open tag (DSML's and MiniMax's newline) is the section's,
    # and so is the ``[`` of a section that is one JSON array of calls (Apertus), with its ``]``.
    close = cls.tool_close_tag or ""
    section_open = head[:len(head) - len(_array_lead(head[len(opener):]))] if grouped else ""
    section_close = close if grouped and tail.endswith(close) else ""
    inside = tail[:len(tail) - len(close)].rstrip()
    if section_open.rstrip().endswith("[") and section_close and inside.endswith("]"):
        section_close = tail[len(inside[:-1].rstrip()):]
    before_name = head[len(section_open):]
    call_end = tail[:len(tail) - len(section_close)]
    if not (middle.startswith(call_end) and middle.endswith(before_name)) or after_1 != after_1b \
            or len(middle) < len(call_end) + len(before_name):
        raise ValueError(f"{cls.__name__}: calls do not render as one repeated layout")
    separator = middle[len(call_end):len(middle) - len(before_name)]
    if after_1 == after_2:
        return CallSyntax(before_name, after_1, arguments, call_end, separator, section_open, section_close,
                          params=params)
    # The calls differ only in their index (Kimi's ``functions.NAME:0`` / ``:1``).
    p = _common_prefix(after_1, after_2)
    s = _common_prefix(after_1[::-1], after_2[::-1])
    if not (after_1[p:len(after_1) - s].isdigit() and after_2[p:len(after_2) - s].isdigit()):
        raise ValueError(f"{cls.__name__}: calls differ by more than an index")
    return CallSyntax(before_name, after_1[:p], arguments, call_end, separator, section_open, section_close,
                      numbered=True, args_open=after_1[len(after_1) - s:], params=params)
