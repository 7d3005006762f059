"""Name -> class registries for response, reasoning and tool parsers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # for the annotations only: those modules import this one
    from .reasoning import ReasoningParser
    from .response.base import ResponseParser
    from .tools.base import ToolParser

Base = TypeVar("Base")  # what every class in one registry derives from
Registered = TypeVar("Registered", bound=type)  # the decorated class, returned unchanged

__all__ = ["Registry", "ResponseParserManager", "ReasoningParserManager", "ToolParserManager"]


class Registry(Generic[Base]):
    """A named table of classes; a class may be registered under several names (aliases)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, type[Base]] = {}

    def register_module(self, name: str | Iterable[str]) -> Callable[[Registered], Registered]:
        names = [name] if isinstance(name, str) else list(name)

        def decorator(cls: Registered) -> Registered:
            for n in names:
                existing = self._classes.get(n)
                if existing is not None and existing is not cls:
                    raise ValueError(f"{self.kind} {n!r} is already registered to {existing.__name__}")
                self._classes[n] = cls  # not checked to derive from Base: a TypeVar bound cannot say so
            return cls

        return decorator

    def get(self, name: str) -> type[Base]:
        try:
            return self._classes[name]
        except KeyError:
            raise ValueError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(sorted(self._classes))}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._classes)

    def aliases(self) -> dict[type[Base], list[str]]:
        """Each registered class with its names, the first-registered (canonical) one first."""
        out: dict[type[Base], list[str]] = {}
        for name, cls in self._classes.items():
            out.setdefault(cls, []).append(name)
        return out

    def __contains__(self, name: object) -> bool:
        return name in self._classes


ResponseParserManager: Registry[ResponseParser] = Registry("response parser")
ReasoningParserManager: Registry[ReasoningParser] = Registry("reasoning parser")
ToolParserManager: Registry[ToolParser] = Registry("tool parser")
