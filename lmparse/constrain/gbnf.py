"""GBNF grammars (llama.cpp's ``grammar`` field) for tool calls, from a dialect's CallSyntax.

``GbnfRules`` turns the common subset of JSON Schema into rules: objects with
``properties`` / ``required`` (properties in their declared order, optional ones
optional), strings, numbers, integers, booleans, null, ``enum`` / ``const``, arrays
with ``items``, type lists and ``anyOf`` / ``oneOf``; anything else is any JSON value.
Literal values are spelled by the dialect's argument style (``literals.Literals``: JSON,
Python's ``True`` / ``None``, Gemma 4's object literals), and XML string parameters as raw
text.  Rule names use letters, digits and ``-`` only, which
both llama.cpp and XGrammar's EBNF parser accept.  Runs of whitespace inside JSON are
bounded (a sampler must not wander there forever), strings are not.
"""

from __future__ import annotations

from typing import Any

from ..schema import schema_type
from ..tools.syntax import CallSyntax
from .literals import IDENTIFIER, JSON_LITERALS, Literals, literal, literals_for

__all__ = ["GbnfRules", "literal", "calls_grammar", "arguments_rule"]

_BASE = {
    "ws": "[ \\t\\n]{0,4}",
    "integer": '"-"? ( "0" | [1-9] [0-9]{0,15} )',
    "number": 'integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?',
}


def _class_char(c: str) -> str:
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "]": "\\]", "^": "\\^", "-": "\\-"}.get(c, c)


def ordered(items: list[tuple[str, bool]], sep: str) -> str:
    """The items in order, each present (True) or optional (False), ``sep`` between those present."""
    if not items:
        return '""'

    def rest(i: int) -> str:
        return " ".join(_seq(sep, e) if required else f"( {_seq(sep, e)} )?" for e, required in items[i:])

    alternatives = []
    for j, (expr, required) in enumerate(items):
        alternatives.append(f"{expr} {rest(j + 1)}".strip())
        if required:
            return "( " + " | ".join(alternatives) + " )"
    return "( " + " | ".join(alternatives) + " )?"


class GbnfRules:
    """The rules of one grammar, values spelled by ``literals`` (JSON unless told)."""

    def __init__(self, literals: Literals = JSON_LITERALS) -> None:
        self.literals = literals
        self.rules: dict[str, str] = {}

    def rule(self, name: str, expr: str) -> str:
        if name not in self.rules:
            self.rules[name] = expr
        return name

    def fresh(self, stem: str, expr: str) -> str:
        n = 0
        while f"{stem}-{n}" in self.rules:
            n += 1
        return self.rule(f"{stem}-{n}", expr)

    def base(self, name: str) -> str:
        """A primitive (``ws``, ``string``, ``number``, ``value`` ...), added on first use."""
        if name in self.rules:
            return name
        if name in _BASE:
            if name == "number":
                self.base("integer")
            return self.rule(name, _BASE[name])
        if name in ("string", "boolean", "null"):
            return self.rule(name, getattr(self.literals, name))
        ws = self.base("ws")
        if name == "value":
            self.rules[name] = "object | array | string | number | boolean | null"  # recursive: name it first
            for part in ("object", "array", "string", "number", "boolean", "null"):
                self.base(part)
            return name
        if name == "object":
            key = self.rule("identifier", IDENTIFIER) if self.literals.bare_keys else self.base("string")
            pair = f'{key} {ws} ":" {ws} value'
            self.rules[name] = f'"{{" {ws} ( {pair} ( {ws} "," {ws} {pair} )* )? {ws} "}}"'
            self.base("value")
            return name
        if name == "array":
            self.rules[name] = f'"[" {ws} ( value ( {ws} "," {ws} value )* )? {ws} "]"'
            self.base("value")
            return name
        raise ValueError(f"no primitive {name!r}")

    def constant(self, value: Any) -> str:
        return self.literals.spell(value)

    def value(self, schema: Any) -> str:
        """An expression for a value matching ``schema``."""
        if not isinstance(schema, dict):
            return self.base("value")
        if "const" in schema:
            return self.constant(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return "( " + " | ".join(self.constant(v) for v in schema["enum"]) + " )"
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return "( " + " | ".join(self.value(option) for option in schema[key]) + " )"
        kinds = schema.get("type")
        if isinstance(kinds, list) and kinds:
            return "( " + " | ".join(self.value({**schema, "type": k}) for k in kinds) + " )"
        kind = schema_type(schema)
        if kind == "object":
            return self.object(schema)
        if kind == "array":
            return self.array(schema)
        if kind in ("string", "number", "integer", "boolean", "null"):
            return self.base(kind)
        return self.base("value")

    def object(self, schema: dict[str, Any]) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return self.base("object")
        ws = self.base("ws")
        required = set(schema.get("required") or ())
        items = [(f'{self.literals.key(key)} {ws} ":" {ws} {self.value(sub)}',
                  key in required)
                 for key, sub in properties.items()]
        body = ordered(items, f'{ws} "," {ws}')
        return self.fresh("object", f'"{{" {ws} {body} {ws} "}}"')

    def array(self, schema: dict[str, Any]) -> str:
        ws = self.base("ws")
        item = self.value(schema.get("items"))
        more = f'( {ws} "," {ws} {item} )*'
        body = f"{item} {more}" if (schema.get("minItems") or 0) >= 1 else f"( {item} {more} )?"
        return self.fresh("array", f'"[" {ws} {body} {ws} "]"')

    def kwargs(self, schema: Any) -> str:
        """Python keyword arguments ``k=v, ...`` for a parameters schema."""
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            name = self.rule("identifier", IDENTIFIER)
            pair = f'{name} "=" {self.base("value")}'
            return f'( {pair} ( ", " {pair} )* )?'
        required = set(schema.get("required") or ())
        items = [(f"{literal(key + '=')} {self.value(sub)}", key in required) for key, sub in properties.items()]
        return ordered(items, '", "')

    def text_until(self, marker: str) -> str:
        """Raw text that does not contain the start of ``marker`` (its first two characters)."""
        a, b = _class_char(marker[0]), _class_char(marker[1]) if len(marker) > 1 else ""
        expr = f"( [^{a}] | {literal(marker[0])} [^{b}] )*" if b else f"[^{a}]*"
        return self.rule("text-" + "-".join(str(ord(c)) for c in marker[:2]), expr)

    def xml_arguments(self, syntax: CallSyntax, schema: Any) -> str:
        """XML parameters in the dialect's layout: strings raw, other values as JSON."""
        params = syntax.params
        assert params is not None
        close = literal(params.close)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            name = self.rule("param-name", "[a-zA-Z_] [a-zA-Z0-9_.-]{0,63}")
            text = self.text_until(params.close)
            return f"( {literal(params.open)} {name} {literal(params.string_open)} {text} {close} )*"
        required = set(schema.get("required") or ())
        items = []
        for key, sub in properties.items():
            kind = schema_type(sub)
            enum = sub.get("enum") if isinstance(sub, dict) else None
            if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
                value = " | ".join(literal(v) for v in enum)
                value = f"{literal(params.open + key + params.string_open)} ( {value} )"
            elif kind == "string":
                value = f"{literal(params.open + key + params.string_open)} {self.text_until(params.close)}"
            else:
                value = f"{literal(params.open + key + params.value_open)} {self.value(sub)}"
            items.append((f"{value} {close}", key in required))
        return ordered(items, '""')

    def render(self) -> str:
        return "\n".join(f"{name} ::= {expr}" for name, expr in self.rules.items()) + "\n"


def arguments_rule(rules: GbnfRules, syntax: CallSyntax, schema: Any) -> str:
    """One call's arguments in the dialect's style: XML parameters, keyword arguments, or an
    object (whatever the schema leaves out)."""
    if syntax.params is not None:
        return rules.xml_arguments(syntax, schema)
    if rules.literals.keyword_arguments:
        return rules.kwargs(schema)
    return rules.value({"type": "object", **schema} if isinstance(schema, dict) else {"type": "object"})


def calls_grammar(syntax: CallSyntax, functions: list[dict[str, Any]], single: bool,
                  reasoning: tuple[str | None, str, bool] | None = None) -> str:
    """A grammar whose sentences are one call (``single``) or one or more calls of ``functions``,
    after an optional reasoning block ``(start tag or None, end tag, the reply starts inside it)``."""
    rules = GbnfRules(literals_for(syntax.arguments))
    rules.rules["root"] = ""  # first in the text
    alternatives = []
    for fn in functions:
        begin = literal(syntax.call_begin(fn["name"]))
        if syntax.numbered:
            begin += f" [0-9]{{1,4}} {literal(syntax.args_open)}"
        body = arguments_rule(rules, syntax, fn.get("parameters"))
        alternatives.append(rules.fresh("call", _seq(begin, body, literal(syntax.call_end))))
    call = rules.rule("call", " | ".join(alternatives))
    calls = call if single else f"{call} ( {_seq(literal(syntax.separator), call)} )*"
    root = _seq(literal(syntax.section_open), calls, literal(syntax.section_close))
    if reasoning is not None:
        start, end, inside = reasoning
        thought = f"{rules.text_until(end)} {literal(end)} [ \\n]{{0,2}}"
        if inside:
            root = f"{thought} {root}"
        elif start:
            root = f"( {literal(start)} {thought} )? {root}"
    rules.rules["root"] = root
    return rules.render()


def _seq(*parts: str) -> str:
    """A sequence of expressions without the empty literals."""
    return " ".join(p for p in parts if p != '""')
