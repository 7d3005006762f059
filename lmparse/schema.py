"""What a tool's JSON Schema says about one value: the facts parsers and the simulated model share.

This is the one place value types are decided.  ``value_types`` reads the types a property
schema allows, following ``$ref`` chains (into the tool's parameters schema: ``$defs``,
``definitions``, any JSON pointer), ``allOf`` (every branch holds), ``anyOf`` / ``oneOf``
(any branch), ``const`` and ``enum``; ``convert_value`` writes a complete value's text as
the JSON of the one type its text unambiguously is among them, else as a string.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterable
from json.encoder import encode_basestring
from typing import Any, Final

__all__ = ["schema_type", "canonical_type", "value_types", "convert_value", "resolve", "streams_as_string", "Kinds",
           "declared_type"]

Kinds = tuple[str, ...]  # JSON Schema type names a value may take, in the schema's order

# Type names tools declare beyond JSON Schema's own (Python's, C's, TypeScript's...), and
# the JSON Schema type each means: every dialect that coerces by schema reads them alike.
_TYPE_NAMES: Final = {
    "int": "integer", "integer": "integer", "long": "integer",
    "float": "number", "double": "number", "number": "number",
    "bool": "boolean", "boolean": "boolean",
    "str": "string", "string": "string",
    "dict": "object", "object": "object", "map": "object",
    "list": "array", "array": "array", "tuple": "array",
    "null": "null", "none": "null",
}
_MAX_REFS: Final = 64  # a $ref chain longer than this (or a cycle) constrains nothing more


def canonical_type(name: Any) -> str | None:
    """The JSON Schema type a declared type name means (``int`` -> ``integer``), else None."""
    if not isinstance(name, str):
        return None
    return _TYPE_NAMES.get(name.strip().lower())


def _json_type(value: Any) -> str:
    """The JSON type of a Python value read from JSON (a ``const`` or ``enum`` entry)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, (list, tuple)) else "object"


def _unique(kinds: Iterable[str | None]) -> Kinds | None:
    found: list[str] = []
    for kind in kinds:
        if kind is not None and kind not in found:
            found.append(kind)
    return tuple(found) or None


def _meet(a: Kinds | None, b: Kinds | None) -> Kinds | None:
    """The types both constraints allow (None: unconstrained); an integer is a number.
    Constraints that allow nothing in common leave the first one (the schema contradicts
    itself: the value is read as the first says)."""
    if a is None:
        return b
    if b is None:
        return a
    both = _unique(k if k in b else "integer" if k == "number" and "integer" in b
                   else k if k == "integer" and "number" in b else None for k in a)
    return both or a


def _pointer(root: Any, ref: str) -> Any:
    """The schema a local ``$ref`` (``#/$defs/Name``, ``#/definitions/Name``, ``#``) names in ``root``."""
    if not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def value_types(schema: Any, root: Any = None, _refs: frozenset[str] = frozenset()) -> Kinds | None:
    """The JSON types a property schema allows, in JSON Schema's names and the schema's
    order; None when it does not constrain the type.  ``root`` is the schema local
    ``$ref``s point into (the tool's parameters schema); a ``$ref`` met again on its own
    chain (a cycle) constrains nothing more."""
    if not isinstance(schema, dict):
        return None
    found: Kinds | None = None
    kind = schema.get("type")
    if kind is not None:
        found = _unique(map(canonical_type, kind if isinstance(kind, list) else (kind,)))
    if "const" in schema:
        found = _meet(found, (_json_type(schema["const"]),))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        found = _meet(found, _unique(map(_json_type, enum)))
    ref = schema.get("$ref")
    if isinstance(ref, str) and root is not None and ref not in _refs and len(_refs) < _MAX_REFS:
        found = _meet(found, value_types(_pointer(root, ref), root, _refs | {ref}))
    branches = schema.get("allOf")
    for branch in branches if isinstance(branches, list) else ():
        found = _meet(found, value_types(branch, root, _refs))
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            union: list[str] = []
            for option in options:
                kinds = value_types(option, root, _refs)
                if kinds is None:  # a branch that allows anything: the union does
                    break
                union.extend(kinds)
            else:
                found = _meet(found, _unique(union))
    return found


def resolve(schema: Any, root: Any = None) -> Any:
    """``schema`` with its ``$ref`` chain followed into ``root`` (a cycle or a dangling
    reference ends it where it stands): where a value's ``properties`` or ``items`` are read."""
    seen: set[str] = set()
    while isinstance(schema, dict) and root is not None:
        ref = schema.get("$ref")
        if not isinstance(ref, str) or ref in seen or len(seen) >= _MAX_REFS:
            break
        seen.add(ref)
        target = _pointer(root, ref)
        if not isinstance(target, dict):
            break
        schema = target
    return schema


# Where a string and other types are allowed, a value whose first character is one of these
# may be another type's spelling (``-7``, ``true``, ``[1]``, a quoted string) and waits for
# its end; any other value is a string from its first character.
_OTHER_STARTS: Final = frozenset('-0123456789tTfFnN[{" \t\r\n')


def streams_as_string(kinds: Kinds | None, first: str) -> bool:
    """Whether a value of ``kinds`` (``value_types``) whose text begins with ``first`` is a
    string from here on (its text may stream), rather than waiting for its end to be typed."""
    if kinds is None or kinds == ("string",):
        return True
    return "string" in kinds and first not in _OTHER_STARTS


def schema_type(schema: Any, root: Any = None) -> str | None:
    """The JSON type a property schema declares, in JSON Schema's names: of a union (a list
    of types, ``anyOf``, ``oneOf``) the first that is not null (see ``value_types``)."""
    kinds = value_types(schema, root)
    if not kinds:
        return None
    return next((k for k in kinds if k != "null"), kinds[0])


# ---- converting a complete value ----------------------------------------------------------

_JSON_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_JSON_INTEGER: Final = re.compile(r"-?(?:0|[1-9]\d*)")
# The order a union's types are tried in: the narrowest spelling first.
_TRY_ORDER: Final = ("null", "boolean", "integer", "number", "array", "object")


def _convert(text: str, kind: str, strict: bool) -> str | None:
    """JSON source for ``text`` (stripped) read as ``kind``, or None if it is not one.
    ``strict`` (a string is allowed too): only a spelling that can be nothing else counts
    (``-7``, not ``+7`` or ``007``)."""
    if kind == "integer":
        if _JSON_INTEGER.fullmatch(text) if strict else re.fullmatch(r"[-+]?\d+", text):
            return str(int(text))
    elif kind == "number":
        if _JSON_NUMBER.fullmatch(text):
            return text
        if strict:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
        if number == number and number not in (float("inf"), float("-inf")):
            return json.dumps(int(number) if number.is_integer() and "." not in text else number)
    elif kind == "boolean":
        if text.lower() in ("true", "false") and (not strict or text in ("true", "false", "True", "False")):
            return text.lower()
    elif kind == "null":
        if text in ("null", "None") or not strict and text.lower() in ("null", "none"):
            return "null"
    elif kind == "json":  # declared JSON with no schema type: a JSON scalar as written
        if _JSON_NUMBER.fullmatch(text) or text in ("true", "false", "null"):
            return text
    elif kind in ("array", "object"):
        wanted = list if kind == "array" else dict
        if strict and not text.startswith("[{"[wanted is dict]):
            return None
        for load in (json.loads, _literal):
            try:
                value = load(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, wanted):
                try:
                    return json.dumps(value, ensure_ascii=False)
                except (TypeError, ValueError):
                    break
    return None


def convert_value(raw: str, kind: str | Kinds | None) -> str:
    """JSON source for a complete value of a schema type (any name ``canonical_type`` knows:
    ``int``, ``double``, ``dict``...) or of a union of types (``value_types``).

    A value is the one type the schema allows that its text is (``-7`` is an integer when
    the only other type allowed is a string); what converts to none of them stays a string,
    and where a string is allowed only a spelling that is unambiguously another type converts."""
    kinds: tuple[Any, ...] = (kind,) if kind is None or isinstance(kind, str) else kind
    kinds = tuple(canonical_type(k) or k for k in kinds)
    text = raw.strip()
    strict = "string" in kinds and len(kinds) > 1
    if len(kinds) == 1:
        order: tuple[Any, ...] = kinds
    else:
        order = tuple(k for k in _TRY_ORDER if k in kinds)
    for one in order:
        if one is not None and one != "string":
            value = _convert(text, one, strict)
            if value is not None:
                return value
    if not strict and kinds[0] not in (None, "string") and text in ("null", "None"):
        return "null"  # an optional typed value, written null (JSON templates) or None (Python str)
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(value, str):
                return encode_basestring(value)
    return encode_basestring(raw)


def declared_type(declared: str, schema: Any, root: Any = None) -> str:
    """The type a value is converted to when the call syntax writes its type (K2 Horizon's
    ``<ifm|arg_type>array[string]</ifm|arg_type>``: the part before ``[`` counts).  With a
    schema, the schema decides, and the declared type only picks one of a union's types; with
    none, the declared type does (``any`` or a name no schema knows: the raw text)."""
    wanted = canonical_type(declared.split("[", 1)[0])
    if isinstance(schema, dict):
        allowed = value_types(schema, root) or ()
        if wanted in allowed and len(allowed) > 1:
            return wanted
        return schema_type(schema, root) or "string"
    return wanted or "string"


def _literal(text: str) -> object:
    """A Python literal, read without evaluating it; a warning its text raises (an invalid
    escape such as ``"\\,"``) is the model's text, not ours to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(text)
