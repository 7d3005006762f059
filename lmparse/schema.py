"""What a tool's JSON Schema says about one value: the facts parsers and the simulated model share."""

from __future__ import annotations

from typing import Any

__all__ = ["schema_type", "canonical_type"]

# Type names tools declare beyond JSON Schema's own (Python's, C's, TypeScript's...), and
# the JSON Schema type each means: every dialect that coerces by schema reads them alike.
_TYPE_NAMES = {
    "int": "integer", "integer": "integer", "long": "integer",
    "float": "number", "double": "number", "number": "number",
    "bool": "boolean", "boolean": "boolean",
    "str": "string", "string": "string",
    "dict": "object", "object": "object", "map": "object",
    "list": "array", "array": "array", "tuple": "array",
    "null": "null", "none": "null",
}


def canonical_type(name: Any) -> str | None:
    """The JSON Schema type a declared type name means (``int`` -> ``integer``), else None."""
    if not isinstance(name, str):
        return None
    return _TYPE_NAMES.get(name.strip().lower())


def schema_type(schema: Any) -> str | None:
    """The JSON type a property schema declares, in JSON Schema's names; unions (a list of
    types, ``anyOf``, ``oneOf``) take the first type that is not null."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in map(canonical_type, kind) if k not in (None, "null")), None)
    else:
        kind = canonical_type(kind)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            for option in options if isinstance(options, list) else ():
                kind = schema_type(option)
                if kind is not None and kind != "null":
                    return kind
    return kind
