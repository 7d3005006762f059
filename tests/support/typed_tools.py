"""A tool whose schema types every JSON kind, for round trips through chat templates."""

from __future__ import annotations

PROPERTIES = {
    "city": {"type": "string"},
    "days": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "nothing": {"type": "null"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "options": {"type": "object"},
    "limit": {"type": ["integer", "null"]},
    "note": {"type": "string"},
}
# One value of every kind for get_weather, as a template writes it back.
TYPED_ARGUMENTS = {
    "city": "Paris\nFrance",
    "days": 3,
    "ratio": 2.5,
    "flag": True,
    "nothing": None,
    "tags": ["a<b", "é"],
    "options": {"unit": "celsius", "levels": [1, 2.5, None, False]},
    "limit": None,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                      "parameters": {"type": "object", "properties": PROPERTIES}}},
    {"type": "function", "function": {"name": "now", "description": "The time.",
                                      "parameters": {"type": "object", "properties": {}}}},
]
