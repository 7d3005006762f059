"""What a tool's JSON Schema says about one value: the facts parsers and the simulated model share."""

from __future__ import annotations

from typing import Any

__all__ = ["schema_type", "canonical_type", "schema_types", "declared_type"]

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


def schema_types(schema: Any) -> list[str]:
    """Every JSON type a property schema allows, in JSON Schema's names and in order (a list
    of types, ``anyOf``, ``oneOf``); empty when it names none."""
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    found = [k for k in map(canonical_type, kind if isinstance(kind, list) else [kind]) if k is not None]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        for option in options if isinstance(options, list) else ():
            found.extend(k for k in schema_types(option) if k not in found)
    return found


def declared_type(declared: str, schema: Any) -> str:
    """The type a value is converted to when the call syntax writes its type (K2 Horizon's
    ``<ifm|arg_type>array[string]</ifm|arg_type>``: the part before ``[`` counts).  With a
    schema, the schema decides, and the declared type only picks one of a union's types; with
    none, the declared type does (``any`` or a name no schema knows: the raw text)."""
    base = declared.split("[", 1)[0].strip().lower()
    wanted = canonical_type(base)
    if isinstance(schema, dict):
        allowed = schema_types(schema)
        if wanted in allowed and len(allowed) > 1:
            return wanted
        return schema_type(schema) or "string"
    return wanted or "string"
