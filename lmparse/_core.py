"""Which parser core runs: the compiled one (mypyc, from these same source files) or the pure one.

The pure-Python package is the reference and the fallback.  A build with ``LMPARSE_COMPILE=1``
(``setup.py``; ``make compiled`` builds it in place) adds a C extension next to each module of
``COMPILED_MODULES`` and one runtime library for them all (``GROUP__mypyc``).  Python prefers an
extension to a source file of the same name, so the compiled core loads whenever it is there,
unless:

- ``LMPARSE_PURE=1`` asks for the pure core: the package's modules are then read from their
  ``.py`` files, whatever is built beside them;
- the build is stale (a source that differs from the one it was built from, as
  ``lmparse/_build_info.py`` records them) or partial (an extension missing): the pure core
  loads, and a warning says why, so an edit is never shadowed by an old build.

``core()`` says which one loaded (``lmparse --version`` prints it).  This module imports only
the standard library and is never compiled: ``setup.py`` reads the module list from it.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["COMPILED_MODULES", "GROUP", "core", "install", "source_digests"]

# The modules compiled: the per-chunk path (the response parser's driver, markers, lanes,
# lexers, the tool dialects, the call emitter and its JSON guard, deltas) and what it calls.
# Not compiled: the package's __init__ modules, the reasoning parsers (descriptors of tags: the
# response driver, compiled, does their per-chunk work), the response-template machinery (it
# makes classes at run time), request normalization, the protocols of tools/hooks.py, and the
# Hunyuan dialect, whose parser switches its tags per block in its instance ``__dict__`` (a
# compiled instance has none).  A
# class here that plain Python classes subclass must allow it (``lmparse._mypyc.mypyc_attr``);
# class-level settings a subclass overrides (or a classmethod reads) are ClassVar.
COMPILED_MODULES: tuple[str, ...] = (
    "lmparse.events",
    "lmparse.markers",
    "lmparse.messages",
    "lmparse.response.base",
    "lmparse.response.block",
    "lmparse.response.harmony.framing",
    "lmparse.response.harmony.header",
    "lmparse.response.harmony.markers",
    "lmparse.response.harmony.render",
    "lmparse.response.harmony.router",
    "lmparse.response.harmony.text",
    "lmparse.response.harmony.tokens",
    "lmparse.response.label",
    "lmparse.response.lexers",
    "lmparse.response.replay",
    "lmparse.response.routing",
    "lmparse.response.text_lane",
    "lmparse.response.tokens",
    "lmparse.schema",
    "lmparse.tools.autoselect",
    "lmparse.tools.base",
    "lmparse.tools.calls",
    "lmparse.tools.dialects._syntax",
    "lmparse.tools.dialects.apertus",
    "lmparse.tools.dialects.cohere_command",
    "lmparse.tools.dialects.deepseek_v3",
    "lmparse.tools.dialects.deepseek_v31",
    "lmparse.tools.dialects.dsml",
    "lmparse.tools.dialects.gemma4",
    "lmparse.tools.dialects.gigachat3",
    "lmparse.tools.dialects.glm47",
    "lmparse.tools.dialects.inkling",
    "lmparse.tools.dialects.internlm",
    "lmparse.tools.dialects.k2_horizon",
    "lmparse.tools.dialects.kimi_k2",
    "lmparse.tools.dialects.kimi_k3",
    "lmparse.tools.dialects.lfm2",
    "lmparse.tools.dialects.llama3",
    "lmparse.tools.dialects.minicpm5",
    "lmparse.tools.dialects.minimax_m2",
    "lmparse.tools.dialects.minimax_m3",
    "lmparse.tools.dialects.mistral",
    "lmparse.tools.dialects.muse",
    "lmparse.tools.dialects.pythonic",
    "lmparse.tools.dialects.qwen",
    "lmparse.tools.dialects.qwen3coder",
    "lmparse.tools.dialects.sarashina",
    "lmparse.tools.dialects.seed_oss",
    "lmparse.tools.dialects.zaya",
    "lmparse.tools.element_values",
    "lmparse.tools.json_arguments",
    "lmparse.tools.json_envelope",
    "lmparse.tools.json_guard",
    "lmparse.tools.json_scanner",
    "lmparse.tools.literal_call",
    "lmparse.tools.python_call",
    "lmparse.tools.recovery",
    "lmparse.tools.section",
    "lmparse.tools.spaced",
    "lmparse.tools.syntax",
    "lmparse.tools.value_grammar",
    "lmparse.tools.xml",
    "lmparse.tools.xml_values",
)
GROUP = "lmparse"  # mypyc's runtime library for the group: ``lmparse__mypyc``
PURE_ENV = "LMPARSE_PURE"

logger = logging.getLogger("lmparse")
_PACKAGE = Path(__file__).resolve().parent
_state: dict[str, str] = {}


def _extension(module: str) -> Path | None:
    """The built extension of ``module`` beside its source, if there is one."""
    base = _PACKAGE.parent.joinpath(*module.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = base.with_name(base.name + suffix)
        if path.is_file():
            return path
    return None


def _runtime() -> Path | None:
    """The group's runtime library inside the package (where an in-place build puts it)."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = _PACKAGE / f"{GROUP}__mypyc{suffix}"
        if path.is_file():
            return path
    return None


def _why_pure() -> str | None:
    """None when the compiled core can load; else why the pure one does."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return f"{PURE_ENV} is set"
    built = [(module, _extension(module)) for module in COMPILED_MODULES]
    found = [path for _, path in built if path is not None]
    if not found:
        return "no compiled build"
    missing = [module for module, path in built if path is None]
    if missing:
        return f"the compiled build is partial ({', '.join(missing[:3])} not built)"
    record = _PACKAGE / "_build_info.py"
    if not record.is_file():
        return "the compiled build has no record of its sources (lmparse/_build_info.py)"
    recorded = runpy.run_path(str(record)).get("SOURCES", {})
    for module, digest in source_digests().items():
        if recorded.get(module) != digest:
            return f"the compiled build is stale ({module} changed since; run `make compiled`)"
    return None


def source_digests() -> dict[str, str]:
    """Each compiled module's source, by content (``setup.py`` records them with the build)."""
    digests = {}
    for module in COMPILED_MODULES:
        source = _PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        digests[module] = hashlib.blake2b(source.read_bytes(), digest_size=12).hexdigest() if source.is_file() else ""
    return digests


class _SourceOnly(importlib.abc.MetaPathFinder):
    """Finds the package's modules as source files only (the pure core)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("lmparse.") or path is None:
            return None
        name = fullname.rpartition(".")[2]
        for entry in path:
            finder = importlib.machinery.FileFinder(
                entry, (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES))
            spec = finder.find_spec(fullname)
            if spec is not None and spec.origin and Path(spec.origin).stem in (name, "__init__"):
                return spec
        return None


def install() -> None:
    """Decide the core once, before the package imports its modules (``lmparse/__init__.py``)."""
    if _state:
        return
    why = _why_pure()
    if why is None:
        runtime = _runtime()
        name = f"{GROUP}__mypyc"
        if runtime is not None and name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, runtime)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                sys.modules[name] = module
        elif importlib.util.find_spec(name) is None:
            why = f"the compiled build has no {name} runtime library"
    if why is not None:
        sys.meta_path.insert(0, _SourceOnly())
        if not why.endswith("is set") and why != "no compiled build":
            logger.warning("lmparse: loading the pure core: %s", why)
        _state.update(core="pure", why=why)
    else:
        _state.update(core="compiled", why=f"mypyc, {len(COMPILED_MODULES)} modules")


def core() -> str:
    """``compiled`` or ``pure``, with why: ``pure (LMPARSE_PURE is set)``, ``compiled (mypyc, 25 modules)``."""
    install()
    return f"{_state['core']} ({_state['why']})"
