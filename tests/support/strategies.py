"""What the families' round-trip tests share: hypothesis strategies for calls whose JSON
values hold a family's hazards (its markers, JSON punctuation, escapes) and prose around them,
and the assistant message a chat template renders calls from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

NAMES = ("f", "g", "get_weather")
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
prose = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="<"), max_size=20)


def hazard_strings(hazards: Sequence[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(list(hazards)) | st.text(max_size=3), max_size=8).map("".join)


def calls_with(hazards: Sequence[str], min_size: int = 1) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    """1-3 calls of NAMES with arguments of every JSON kind, strings built from ``hazards``."""
    scalars = st.none() | st.booleans() | st.integers() | hazard_strings(hazards)
    values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(keys, kids, max_size=3),
                          max_leaves=8)
    return st.lists(st.tuples(st.sampled_from(NAMES), st.dictionaries(keys, values, max_size=4)),
                    min_size=min_size, max_size=3)


def assistant_calling(calls: Sequence[tuple[str, dict[str, Any]]], **fields: Any) -> dict[str, Any]:
    """An assistant message with ``calls`` (arguments as dicts, as templates want them)."""
    return {"role": "assistant", **fields,
            "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                           for i, (n, a) in enumerate(calls)]}
