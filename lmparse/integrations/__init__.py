"""lmparse's parsers inside the engines people scale on: vLLM, SGLang and LMDeploy plugins.

Each submodule imports its engine and registers ``lmparse-<name>`` tool and reasoning parsers
into that engine's own registries; import it only inside a process that has the engine.
What they register is ``plugin_names()``: every name the declared families give their parsers
(``lmparse.families``), so a new family reaches every engine with no edit here.
See docs/plugins.md for the launch lines and the compatibility table.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PluginNames", "plugin_names"]


class PluginNames(NamedTuple):
    tool: list[str]  # every tool parser name
    reasoning: list[str]  # every reasoning parser name
    framed: list[str]  # response parsers that frame the whole reply (Harmony), offered as tool and reasoning names too


def plugin_names() -> PluginNames:
    """The lmparse names the engine plugins register, sorted, from the family declarations."""
    from ..families import FAMILIES, GENERIC

    tool: set[str] = set()
    reasoning = {p.name for p in GENERIC["reasoning"]}
    framed: set[str] = set()
    for family in FAMILIES:
        if family.tool is not None:
            tool.update((family.tool.name, *family.tool_names))
        if family.reasoning is not None:
            reasoning.update((family.reasoning.name, *family.reasoning_names))
        if family.response is not None and family.response.cls.frames_reply:
            framed.add(family.response.name)
    return PluginNames(sorted(tool), sorted(reasoning), sorted(framed))
