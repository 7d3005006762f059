"""Python call syntax, for tool calls written as Python: ``name(key=literal, ...)``.

``CallScanner`` finds, lexically and incrementally, the ``)`` that closes a call;
``call_arguments`` turns one complete call's source into JSON arguments with ``ast``
(parsed, never evaluated); ``python_literal`` is the inverse, for renderers.
"""

from __future__ import annotations

from typing import Final

import ast
import io
import json
import keyword
import re
import tokenize
import warnings

__all__ = ["CallScanner", "call_arguments", "literal_value", "python_literal", "raw_quotable"]

_CODE: Final = re.compile(r"[^'\"()\[\]{}]*")  # a run with no quote or bracket
_ELEMENT_CODE: Final = re.compile(r"[^'\"()\[\]{},]*")  # ... nor a comma


class CallScanner:
    """Finds the ``)`` that closes a call, over source fed in pieces.  Linear: string
    bodies are skipped with ``str.find``, other runs with one regex match.  What cannot be
    classified yet (a trailing backslash, or one or two quotes that may be a triple
    quote's start or end) is left unconsumed, so no state spans a half-seen delimiter."""

    __slots__ = ("depth", "quote", "element")

    def reset(self, element: bool = False) -> None:
        """``element``: scan a list element instead, to the ``,`` or closing bracket that ends it."""
        self.depth = 1  # just after the call's "(" (or inside the list)
        self.quote = ""  # the open string's delimiter: one or three quote characters
        self.element = element

    def scan(self, text: str, pos: int, final: bool) -> tuple[int, bool]:
        """``(index after the call's ")", True)`` (of an element: the index of the ``,`` or
        bracket after it), or ``(how far it is safe to consume, False)``."""
        n = len(text)
        code = _ELEMENT_CODE if self.element else _CODE
        while pos < n:
            if self.quote:
                pos = self._string(text, pos, n, final)
                if self.quote:
                    break
                continue
            pos = code.match(text, pos).end()  # type: ignore[union-attr]  # matches empty: never None
            if pos == n:
                break
            c = text[pos]
            if self.element and self.depth == 1 and c in ",)]}":
                return pos, True
            if c == "'" or c == '"':
                if text.startswith(c * 3, pos):
                    self.quote, pos = c * 3, pos + 3
                elif not final and n - pos < 3 and text.count(c, pos) == n - pos:
                    break  # maybe the start of a triple quote
                else:
                    self.quote, pos = c, pos + 1
                continue
            pos += 1
            if c == ",":
                continue  # (the element scan stops at commas nested in brackets too)
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


# JSON's constants, read as Python names in a call whose literals mix both (LFM2).
_JSON_CONSTANTS: Final = {"true": True, "false": False, "null": None}


class _JsonConstants(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _JSON_CONSTANTS:
            return ast.copy_location(ast.Constant(_JSON_CONSTANTS[node.id]), node)
        return node


def call_arguments(source: str, json_constants: bool = False) -> tuple[str | None, str]:
    """``(JSON arguments, "")`` of one call's source, or ``(None, why it is no tool call)``;
    with ``json_constants``, ``true`` / ``false`` / ``null`` are literals too."""
    renamed: dict[str, str] = {}
    call = _parse(source)
    if call is None:
        source, renamed = _rename_keyword_arguments(source)
        call = _parse(source) if renamed else None
    if call is None:
        return None, "not Python call syntax"
    if not isinstance(call, ast.Call) or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None, "not a function call"
    if call.args:
        return None, "positional argument"
    if json_constants:
        call = _JsonConstants().visit(call)
    pairs = []
    for kw in call.keywords:
        if kw.arg is None:
            return None, "** argument"
        try:
            value = json.dumps(ast.literal_eval(kw.value), ensure_ascii=False, allow_nan=False)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None, f"argument {kw.arg!r} is not a literal with a JSON form"
        pairs.append(f"{json.dumps(renamed.get(kw.arg, kw.arg), ensure_ascii=False)}: {value}")
    return "{" + ", ".join(pairs) + "}", ""


def literal_value(source: str, json_constants: bool = False) -> tuple[bool, object]:
    """``(True, value)`` of one Python literal's source (parsed, never evaluated), or
    ``(False, None)`` when it is not one; with ``json_constants``, ``true`` / ``false`` /
    ``null`` are literals too."""
    node = _parse(source)
    if node is None:
        return False, None
    if json_constants:
        node = _JsonConstants().visit(node)
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False, None


def _parse(source: str) -> ast.expr | None:
    try:
        with warnings.catch_warnings():  # (``"\,"`` in a model's literal is its text, not our warning)
            warnings.simplefilter("ignore")
            return ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_LAYOUT: Final = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)


def _rename_keyword_arguments(source: str) -> tuple[str, dict[str, str]]:
    """``source`` with each argument named by a Python keyword (``f(from='a', in=1)``, which a
    template writes for a parameter named so) renamed to a free identifier, and the map back;
    ``(source, {})`` when there is none.  Read with ``tokenize``, so strings are never touched."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _LAYOUT]
    except (tokenize.TokenError, SyntaxError):
        return source, {}
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    renamed: dict[str, str] = {}
    for before, token, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (token.type == tokenize.NAME and keyword.iskeyword(token.string) and after.string == "="
                and before.string in ("(", ",")):
            name = f"_lmparse_keyword_{len(renamed)}"
            while name in source:
                name += "_"
            renamed[name] = token.string
            at = starts[token.start[0] - 1] + token.start[1]
            edits.append((at, at + len(token.string), name))
    for at, end, name in reversed(edits):
        source = source[:at] + name + source[end:]
    return source, renamed


def python_literal(value: object) -> str:
    """Python source of a JSON value; a JSON string literal reads the same in Python."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)  # numbers, True, False, None


def raw_quotable(text: str) -> bool:
    """Whether ``'text'``, as the template writes it, reads back as ``text`` in Python."""
    return "'" not in text and "\\" not in text and text.isprintable()
