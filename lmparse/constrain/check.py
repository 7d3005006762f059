"""The verdict on a finished reply that had to call a tool: did it, with valid arguments?

``schema_errors`` checks a value against the JSON Schema subset the constraints enforce
(type, properties / required / additionalProperties false, enum, const, items,
anyOf / oneOf); what it does not know it accepts.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["schema_errors", "check_calls"]

_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "number": (int, float), "integer": (int,), "null": (type(None),)}


def _is(value: Any, kind: str) -> bool:
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(kind, (object,)))


def schema_errors(value: Any, schema: Any, path: str = "arguments") -> list[str]:
    """What in ``value`` breaks ``schema`` (empty: nothing)."""
    if not isinstance(schema, dict):
        return []
    if "const" in schema and value != schema["const"]:
        return [f"{path} must be {schema['const']!r}"]
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return [f"{path} must be one of {schema['enum']!r}"]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and all(schema_errors(value, o, path) for o in options):
            return [f"{path} matches none of its {key} schemas"]
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if kinds and not any(_is(value, k) for k in kinds):
        return [f"{path} must be of type {' or '.join(kinds)}"]
    errors: list[str] = []
    if isinstance(value, dict):
        found = schema.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        errors += [f"{path}.{key} is required" for key in schema.get("required") or () if key not in value]
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}.{key} is not a parameter")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            errors += schema_errors(item, schema.get("items"), f"{path}[{i}]")
    return errors


def check_calls(calls: list[tuple[str, str]], functions: list[dict[str, Any]]) -> str | None:
    """Why the reply's ``(name, arguments)`` calls do not satisfy a tool_choice that required
    one of ``functions`` (None: they do)."""
    if not calls:
        return "the model did not call a tool although tool_choice required it"
    schemas = {fn["name"]: fn.get("parameters") for fn in functions}
    for name, arguments in calls:
        if name not in schemas:
            return f"the model called {name!r}, which tool_choice does not allow"
        try:
            value = json.loads(arguments or "{}")
        except ValueError:
            return f"the model's arguments for {name!r} are not JSON"
        errors = schema_errors(value, schemas[name])
        if errors:
            return f"the model's call of {name!r} does not match its schema: {'; '.join(errors[:3])}"
    return None
