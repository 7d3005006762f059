"""Which served model a request's ``model`` names, and the model objects of both APIs.

Each binding answers to its names: exact names and glob patterns (``claude-*``,
``gpt-5*``), from ``--served-model-name``; the family name when none is given.  Exact
names win over patterns, and patterns are tried in the order they were given.  A server
with one model answers to any name (agent clients send their own model names); with
several, a name nothing matches is a 404 listing what is served.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["ModelNames", "openai_model", "anthropic_model", "is_pattern"]

_GLOB = re.compile(r"[*?\[]")
_MAX_NAME = 256  # longer names match nothing: a pattern never runs on a megabyte of text


def is_pattern(name: str) -> bool:
    return bool(_GLOB.search(name))


class ModelNames:
    def __init__(self, bindings: Sequence[Any]) -> None:
        self.bindings = list(bindings)
        self._exact: dict[str, Any] = {}
        self._patterns: list[tuple[re.Pattern[str], str, Any]] = []
        for binding in self.bindings:
            for name in binding.names:
                if is_pattern(name):
                    self._patterns.append((re.compile(fnmatch.translate(name)), name, binding))
                elif name in self._exact and self._exact[name] is not binding:
                    raise ValueError(f"model name {name!r} is served twice")
                else:
                    self._exact[name] = binding

    def resolve(self, name: Any) -> Any | None:
        """The binding for ``name``; with one binding, any name (or none) is it."""
        if len(self.bindings) == 1:
            return self.bindings[0]
        if not isinstance(name, str) or len(name) > _MAX_NAME:
            return None
        found = self._exact.get(name)
        if found is not None:
            return found
        for pattern, _, binding in self._patterns:
            if pattern.match(name):
                return binding
        return None

    def listed(self) -> list[tuple[str, Any]]:
        """``(id, binding)`` for every exact name, in the order served."""
        return list(self._exact.items())

    def served(self) -> str:
        """What a 404 lists: every name and pattern."""
        return ", ".join(n for b in self.bindings for n in b.names)


def openai_model(model_id: str, binding: Any, created: int) -> dict:
    return {"id": model_id, "object": "model", "created": created, "owned_by": "lmparse",
            "family": binding.family.name, "engine": binding.engine.name,
            "patterns": [n for n in binding.names if is_pattern(n)]}


def anthropic_model(model_id: str, binding: Any, created: int) -> dict:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created))
    return {"type": "model", "id": model_id, "display_name": f"{model_id} (lmparse {binding.family.name})",
            "created_at": stamp}
