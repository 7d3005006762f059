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

from lmparse.registry import ReasoningParserManager as LmReasoning
from lmparse.registry import ToolParserManager as LmTools

from ._compat import ReasoningParserManager, ToolParserManager
from .reasoning import LmparseReasoningParser, reasoning_parser_class
from .tools import LmparseToolParser, tool_parser_class

__all__ = ["register", "registered_names", "LmparseToolParser", "LmparseReasoningParser", "PREFIX"]

PREFIX = "lmparse-"
_CLASSES: dict[tuple[str, str], type] = {}  # (kind, lmparse name) -> class, made once per process


def registered_names() -> tuple[list[str], list[str]]:
    """The vLLM names this plugin registers: (tool parsers, reasoning parsers)."""
    return [PREFIX + n for n in LmTools.names()], [PREFIX + n for n in LmReasoning.names()]


def register() -> None:
    """Register every ``lmparse-<name>`` into vLLM's registries; calling it again changes nothing."""
    for name in LmTools.names():
        cls = _CLASSES.get(("tool", name)) or _CLASSES.setdefault(("tool", name), tool_parser_class(name))
        if ToolParserManager.tool_parsers.get(PREFIX + name) is not cls:
            ToolParserManager.register_module(name=PREFIX + name, module=cls, force=True)
    for name in LmReasoning.names():
        cls = _CLASSES.get(("reasoning", name)) or _CLASSES.setdefault(("reasoning", name),
                                                                         reasoning_parser_class(name))
        if ReasoningParserManager.reasoning_parsers.get(PREFIX + name) is not cls:
            ReasoningParserManager.register_module(name=PREFIX + name, module=cls, force=True)


register()
