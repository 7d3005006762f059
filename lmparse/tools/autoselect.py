"""Tool-parser auto-selection: the one dialect a chat template (and vocabulary) writes, or a refusal.

Each dialect's evidence is its ``template_markers`` when it declares them, else the
markers its parser reads (open and close tags, parameter and function markers).  A
dialect matches when every piece of its evidence occurs in the template source (with
``\\n`` escapes read as newlines) or is a token of the vocabulary (which only supplements a
template: markers some templates build from pieces are whole tokens).  A match whose
evidence is a strict subset of another match's is explained by the other (``<tool_call>``
alone is also in every Qwen3-Coder template); matches with the same evidence that are one
class and its subclasses (which only lay calls out differently) are that class.  Anything else left
with two or more candidates, or none, is a ``ValueError`` that lists them: a wrong silent
pick would parse no calls and answer HTTP 200.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..registry import ToolParserManager
from .base import ToolParser

__all__ = ["evidence", "matching_dialects", "select_tool_parser"]


def evidence(cls: type[ToolParser]) -> frozenset[str]:
    """What a chat template writing ``cls``'s calls must contain."""
    if cls.template_markers:
        return frozenset(cls.template_markers)
    read = [*cls.tool_open_tags, *cls.payload_open_tags, cls.tool_close_tag,
            *(getattr(cls, a, None) for a in ("parameter_open", "function_close", "arg_value_close"))]
    return frozenset(m.strip() for m in read if isinstance(m, str) and m.strip())  # layout is no evidence


def matching_dialects(chat_template: str | None, vocabulary: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """Canonical name -> evidence of every registered dialect whose evidence is all present."""
    text = (chat_template or "").replace("\\n", "\n")
    tokens = set(vocabulary)
    found = {}
    for cls, names in ToolParserManager.aliases().items():
        marks = evidence(cls)
        if marks and all(m in text or m in tokens for m in marks):
            found[names[0]] = marks
    return found


def _explained(found: dict[str, frozenset[str]]) -> list[str]:
    """The matches no other match explains better (a strict superset of evidence)."""
    return [name for name, marks in found.items() if not any(marks < other for other in found.values())]


def select_tool_parser(chat_template: str | None, vocabulary: Iterable[str] = ()) -> str:
    """The canonical name of the one dialect ``chat_template`` writes; ``ValueError`` otherwise."""
    if not chat_template:  # a vocabulary alone cannot tell Qwen3 from Qwen3-Coder
        raise ValueError("tool parser 'auto' needs the model's chat template to choose from")
    found = matching_dialects(chat_template, vocabulary)
    left = _explained(found)
    classes = {name: ToolParserManager.get(name) for name in left}
    same = len({found[n] for n in left}) == 1
    roots = [n for n, cls in classes.items() if same and all(issubclass(other, cls) for other in classes.values())]
    if len(roots) == 1:
        return roots[0]
    if not left:
        raise ValueError("tool parser 'auto': the chat template matches no registered dialect; name one with "
                         f"--tool-call-parser / tool_parser= (registered: {', '.join(ToolParserManager.names())})")
    raise ValueError(f"tool parser 'auto': the chat template matches several dialects ({', '.join(sorted(left))}); "
                     "name one with --tool-call-parser / tool_parser=")
