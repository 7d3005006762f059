"""What ``lmparse parsers`` lists: every registered parser with its aliases, read off the classes.

Each row comes from what the class itself declares (``summary`` and ``streaming`` on tool
and response parsers; tags and ``initial_mode`` on reasoning parsers) and from the call
syntax generation constraints are built from (``lmparse.constrain.dialect_syntax``): the
argument style of its structural tag, or ``-`` when ``tool_choice="required"`` cannot be
enforced for it.  No hand-kept table.
"""

from __future__ import annotations

from typing import Any

from . import factory  # noqa: F401  (registers the built-in parsers)
from .constrain import Unconstrainable, dialect_syntax
from .registry import ReasoningParserManager, Registry, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request

__all__ = ["parser_rows", "format_rows"]

_COLUMNS = ("kind", "name", "aliases", "syntax", "streaming", "structural_tag")


def _structural_key(name: str) -> str:
    try:
        return dialect_syntax(name).arguments
    except Unconstrainable:
        return "-"


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


# Where a reply starts, by what ``starts_in_reasoning`` says for thinking unset / on / off.
_STARTS = {
    (True, True, True): "always in reasoning",
    (False, False, False): "plain (the model opens reasoning)",
    (True, True, False): "in reasoning unless thinking is off",
    (False, True, False): "in reasoning if thinking is on",
}


def _reasoning_row(cls: Any) -> tuple[str, str, str]:
    start = cls.start_tag or "(prefilled by the prompt)"
    said = tuple(cls(ParserRequest.accept_all() if t is None else _thinking(t)).starts_in_reasoning()
                 for t in (None, True, False))
    mode = _STARTS.get(said, "depends on the request")
    if cls.initial_mode == "auto":
        mode = f"as the prompt's tail says (auto), else {mode}"
    return f"{start} … {cls.end_tag}", f"reasoning text as it arrives; starts {mode}", "-"


def _thinking(on: bool) -> ParserRequest:
    return normalize_request({"messages": [], "chat_template_kwargs": {"enable_thinking": on}})


def _rows(kind: str, registry: Registry[Any]) -> list[dict[str, Any]]:
    rows = []
    for cls, names in registry.aliases().items():
        if kind == "reasoning":
            syntax, streaming, key = _reasoning_row(cls)
        else:
            syntax = getattr(cls, "summary", "") or _first_line(cls.__doc__)
            streaming = getattr(cls, "streaming", "")
            key = _structural_key(names[0]) if kind == "tool" or hasattr(cls, "call_syntax") else "-"
        rows.append({"kind": kind, "name": names[0], "aliases": names[1:], "syntax": syntax,
                     "streaming": streaming, "structural_tag": key})
    return sorted(rows, key=lambda row: row["name"])


def parser_rows() -> list[dict[str, Any]]:
    """One row per registered class: tool, then reasoning, then response parsers."""
    return [*_rows("tool", ToolParserManager), *_rows("reasoning", ReasoningParserManager),
            *_rows("response", ResponseParserManager)]


def format_rows(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, one parser a line (aliases comma-separated, ``-`` for none)."""
    cells = [[str(row[c]) if c != "aliases" else (", ".join(row[c]) or "-") for c in _COLUMNS] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(_COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    return "\n".join(lines) + "\n"
