"""How an argument style spells literal values in a grammar: one ``Literals`` value per style.

A dialect's ``CallSyntax.arguments`` names its style; the grammar builders (``gbnf``,
``structural``) ask the style's ``Literals`` for every spelling that differs between styles,
and branch on nothing else: strings, booleans and null, object keys, constants, and whether
arguments are one object or Python keyword arguments.  A new literal syntax is a new value
here, not a branch in the builders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Literals", "JSON_LITERALS", "PYTHON_LITERALS", "GEMMA_LITERALS", "literals_for", "literal"]

_JSON_CHAR = r'[^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )'
_PYTHON_CHAR = r'[^"\\\x00-\x1f] | "\\" ( ["\\bfnrt] | "u" [0-9a-fA-F]{4} )'
# A single-quoted Python string as LFM2's template writes it: raw, no quote or backslash inside.
_PYTHON_SINGLE = "\"'\" [^'\\\\\\x00-\\x1f]* \"'\""
# Gemma 4 strings are raw text up to ``<|"|>``: any text that does not spell it (nor ends in
# ``<``, which the closing delimiter would turn into it).
_GEMMA_QUOTE = '<|"|>'
_GEMMA_CHAR = '[^<] | "<" [^|<] | "<|" [^"<] | "<|\\"" [^|<] | "<|\\"|" [^><]'
IDENTIFIER = "[a-zA-Z_] [a-zA-Z0-9_]{0,63}"


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = ['"']
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


class Literals(NamedTuple):
    """One argument style's literal spellings, as GBNF expressions."""

    style: str  # the ``CallSyntax.arguments`` it serves
    string: str  # a string value
    boolean: str
    null: str
    bare_keys: bool  # object keys are identifiers (``{key:...}``), not strings
    keyword_arguments: bool  # the arguments are ``k=v, ...``, not one object
    spell: Callable[[Any], str]  # a constant (``const`` / ``enum``) as an expression

    def key(self, name: str) -> str:
        """A declared property name as the style writes it."""
        return literal(name) if self.bare_keys else self.spell(name)


def _json(value: Any) -> str:
    return literal(json.dumps(value, ensure_ascii=False))


def _python(value: Any) -> str:
    from ..tools.python_call import python_literal, raw_quotable

    if isinstance(value, str) and raw_quotable(value):  # either quoting (LFM2 writes '...')
        return f"( {literal(python_literal(value))} | {literal(repr(value))} )"
    return literal(python_literal(value))


def _gemma(value: Any) -> str:
    from ..tools.value_grammar import GEMMA_LITERAL, render_literal

    return literal(render_literal(value, GEMMA_LITERAL))


JSON_LITERALS = Literals("json", f'"\\"" ( {_JSON_CHAR} )* "\\""', '"true" | "false"', '"null"', False, False, _json)
PYTHON_LITERALS = Literals("python", f'"\\"" ( {_PYTHON_CHAR} )* "\\"" | {_PYTHON_SINGLE}', '"True" | "False"',
                           '"None"', False, True, _python)
GEMMA_LITERALS = Literals("gemma", f"{literal(_GEMMA_QUOTE)} ( {_GEMMA_CHAR} )* {literal(_GEMMA_QUOTE)}",
                          '"true" | "false"', '"null"', True, False, _gemma)
_BY_STYLE = {lit.style: lit for lit in (JSON_LITERALS, PYTHON_LITERALS, GEMMA_LITERALS)}


def literals_for(style: str) -> Literals:
    """The literals of an argument style; XML parameter styles write non-string values as JSON."""
    return _BY_STYLE.get(style, JSON_LITERALS)
