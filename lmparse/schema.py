"""What a tool's JSON Schema says about one value: the facts parsers and the simulated model share."""

from __future__ import annotations

from typing import Any

__all__ = ["schema_type"]


def schema_type(schema: Any) -> str | None:
    """The JSON type a property schema declares; unions take the first non-null type."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            for option in schema.get(key) or ():
                kind = schema_type(option)
                if kind is not None and kind != "null":
                    return kind
    return kind if isinstance(kind, str) else None
