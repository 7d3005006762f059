"""Model families: one module each, the one place a family is declared.

Every module here (not starting with ``_``) declares ``FAMILY``, a ``Family`` value: its tool
dialect, reasoning and response parsers with the registry names they answer to, the test data
it is served and verified with, its end-of-turn texts and the names peers give it.  Importing
this package reads them all and fills the three registries (``lmparse.registry``); everything
that lists families (``lmparse serve --family``, ``lmparse parsers``, auto-selection, the
engine plugins, the docs' table and the test matrix) lists ``FAMILIES``.

A parser's canonical registry name is the one its ``Parser`` value carries (declared once, in
the module of the family it was written for); the names families add are aliases.  The
parsers no family owns (the default router, the response-template parser, plain ``<think>``)
are ``GENERIC``.  The modules are listed with ``os.listdir``, not ``pkgutil`` (which imports
``inspect``, a fifth of ``import lmparse``).
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

from ..registry import ReasoningParserManager, Registry, ResponseParserManager, ToolParserManager
from ..response.base import BaseResponseParser
from ..response.template import ResponseTemplateParser
from ._shared import THINK
from ._spec import Family, Parser, Peers

__all__ = ["Family", "Parser", "Peers", "FAMILIES", "GENERIC", "DEFAULT", "get_family"]

DEFAULT = "qwen3"  # the family ``lmparse serve`` binds when none is named

# Parsers that belong to no family: the router every family uses, and the one a
# ``response_template`` configures.
GENERIC = {
    "response": (Parser("default", BaseResponseParser), Parser("response-template", ResponseTemplateParser)),
    "reasoning": (THINK,),
}


def _load() -> tuple[Family, ...]:
    found = []
    for file in sorted(os.listdir(__path__[0])):
        if file.endswith(".py") and not file.startswith("_"):
            found.append(import_module(f"{__name__}.{file[:-3]}").FAMILY)
    return tuple(found)


FAMILIES: tuple[Family, ...] = _load()
_BY_NAME = {f.name: f for f in FAMILIES}
if len(_BY_NAME) != len(FAMILIES):
    raise ValueError(f"two family modules declare one name: {sorted(f.name for f in FAMILIES)}")

_KINDS: tuple[tuple[str, Registry[Any]], ...] = (
    ("tool", ToolParserManager), ("reasoning", ReasoningParserManager), ("response", ResponseParserManager))


def _parsers(kind: str) -> list[Parser]:
    declared = [getattr(f, kind) for f in FAMILIES if getattr(f, kind) is not None]
    return [*GENERIC.get(kind, ()), *declared]


def _register() -> None:
    """Canonical names first (so each class lists its own first), then the families' aliases.
    A class declared under two canonical names is a mistake in a family module."""
    for kind, registry in _KINDS:
        canonical: dict[Any, str] = {}
        for parser in _parsers(kind):
            if canonical.setdefault(parser.cls, parser.name) != parser.name:
                raise ValueError(f"{kind} parser {parser.cls.__name__} is declared as both "
                                 f"{canonical[parser.cls]!r} and {parser.name!r}")
            registry.register_module(parser.name)(parser.cls)
        for family in FAMILIES:
            parser = getattr(family, kind)
            for name in getattr(family, f"{kind}_names", ()):
                registry.register_module(name)(parser.cls)


_register()


def get_family(name: str) -> Family:
    """The family called ``name``; ``ValueError`` listing the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown family {name!r}; known: {', '.join(sorted(_BY_NAME))}") from None
