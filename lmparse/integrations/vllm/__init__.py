"""lmparse's parsers inside vLLM: ``lmparse-<name>`` tool and reasoning parsers.

Importing this module registers, for every lmparse tool parser name, a vLLM ``ToolParser``
``lmparse-<name>`` and, for every reasoning parser name, a ``ReasoningParser``
``lmparse-<name>``, eagerly and idempotently (vLLM imports a ``--tool-parser-plugin`` twice).
Two routes, the same registration::

    vllm serve M --enable-auto-tool-choice \\
        --tool-parser-plugin lmparse.integrations.vllm --tool-call-parser lmparse-qwen3coder \\
        --reasoning-parser-plugin lmparse.integrations.vllm --reasoning-parser lmparse-qwen3

or no plugin flags at all: the ``lmparse`` entry point of the ``vllm.general_plugins`` group
calls ``register`` in every vLLM process (the API server and the engine core, where
``is_reasoning_end`` gates grammar enforcement).  See docs/plugins-vllm.md.
"""

from __future__ import annotations

from typing import Any

from .. import plugin_names
from ._compat import ReasoningParserManager, ToolParserManager
from .reasoning import LmparseReasoningParser, reasoning_parser_class
from .tools import LmparseToolParser, tool_parser_class

__all__ = ["register", "registered_names", "LmparseToolParser", "LmparseReasoningParser", "PREFIX"]

PREFIX = "lmparse-"
_CLASSES: dict[tuple[str, str], type] = {}  # (kind, lmparse name) -> class, made once per process


def _names() -> list[tuple[str, str, str]]:
    """(kind, lmparse name, response parser) for every class: each tool and reasoning parser name,
    and each response parser that frames the whole reply (gpt-oss) as both a tool and a reasoning
    parser, for models whose output is that grammar but which vLLM composes like any other."""
    names = plugin_names()
    return ([("tool", n, "default") for n in names.tool] + [("tool", n, n) for n in names.framed]
            + [("reasoning", n, "default") for n in names.reasoning] + [("reasoning", n, n) for n in names.framed])


def registered_names() -> tuple[list[str], list[str]]:
    """The vLLM names this plugin registers: (tool parsers, reasoning parsers)."""
    names = _names()
    return [PREFIX + n for k, n, _ in names if k == "tool"], [PREFIX + n for k, n, _ in names if k == "reasoning"]


def register() -> None:
    """Register every ``lmparse-<name>`` into vLLM's registries; calling it again changes nothing."""
    for kind, name, response in _names():
        cls = _CLASSES.get((kind, name))
        if cls is None:
            make = tool_parser_class if kind == "tool" else reasoning_parser_class
            cls = _CLASSES.setdefault((kind, name), make(name, response))
        registry: Any = ToolParserManager if kind == "tool" else ReasoningParserManager
        table = registry.tool_parsers if kind == "tool" else registry.reasoning_parsers
        if table.get(PREFIX + name) is not cls:
            registry.register_module(name=PREFIX + name, module=cls, force=True)


register()
