"""Name -> class registries for response, reasoning and tool parsers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["Registry", "ResponseParserManager", "ReasoningParserManager", "ToolParserManager"]


class Registry:
    """A named table of classes; a class may be registered under several names (aliases)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, type] = {}

    def register_module(self, name: str | Iterable[str]) -> Callable[[T], T]:
        names = [name] if isinstance(name, str) else list(name)

        def decorator(cls: T) -> T:
            for n in names:
                existing = self._classes.get(n)
                if existing is not None and existing is not cls:
                    raise ValueError(f"{self.kind} {n!r} is already registered to {existing.__name__}")
                self._classes[n] = cls  # type: ignore[assignment]
            return cls

        return decorator

    def get(self, name: str) -> type:
        try:
            return self._classes[name]
        except KeyError:
            raise ValueError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(sorted(self._classes))}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes


ResponseParserManager = Registry("response parser")
ReasoningParserManager = Registry("reasoning parser")
ToolParserManager = Registry("tool parser")
