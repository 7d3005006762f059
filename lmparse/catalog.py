"""What ``lmparse parsers`` and ``lmparse families`` list, read off the classes and the family declarations.

Each row comes from what the class itself declares (``summary`` and ``streaming`` on tool
and response parsers; tags and ``initial_mode`` on reasoning parsers) and from the call
syntax generation constraints are built from (``lmparse.constrain.dialect_syntax``): the
argument style of its structural tag, or ``-`` when ``tool_choice="required"`` cannot be
enforced for it.  No hand-kept table.
"""

from __future__ import annotations

from typing import Any

from .constrain import Unconstrainable, dialect_syntax
from .families import FAMILIES, Family
from .registry import ReasoningParserManager, Registry, ResponseParserManager, ToolParserManager
from .request import ParserRequest, normalize_request

__all__ = ["parser_rows", "format_rows", "family_rows", "format_family_markdown"]

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


def _names(parser: Any, aliases: tuple[str, ...]) -> list[str]:
    return [] if parser is None else list(dict.fromkeys((parser.name, *aliases)))


def family_rows() -> list[dict[str, Any]]:
    """One row per declared family, by name."""
    def row(f: Family) -> dict[str, Any]:
        peers = {k: list(v) for k, v in f.peers._asdict().items() if v}
        lead, separator = f.layout
        syntax = f.call_syntax()
        return {"family": f.name, "description": f.description, "tool": _names(f.tool, f.tool_names),
                "reasoning": _names(f.reasoning, f.reasoning_names), "response": f.response_parser,
                "tokenizer": f.tokenizer or "-", "templates": list(f.verified_templates), "peers": peers,
                "verified": f.verified, "starts": reply_start(f),
                "layout": {"block_lead": lead, "block_separator": separator},
                "structural_tag": syntax.arguments if syntax is not None else "-"}
    return [row(f) for f in sorted(FAMILIES, key=lambda f: f.name)]


def reply_start(family: Family) -> str:
    """Where a reply of the family starts, by the reasoning parser's rule: with thinking left
    unset, turned on, turned off, and whether the rendered prompt's end decides instead."""
    if family.reasoning is None:
        return "content"
    cls = family.reasoning.cls
    unset, on, off = (cls(ParserRequest(thinking=t)).starts_in_reasoning() for t in (None, True, False))
    if unset and off:
        start = "reasoning"
    elif unset:
        start = "reasoning (content when thinking is off)"
    elif on:
        start = "content (reasoning when thinking is on)"
    else:
        start = "content (the model opens reasoning)"
    return start + ("; the prompt's end decides when given" if cls.initial_mode == "auto" else "")


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "-"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {', '.join(v)}" for k, v in value.items()) or "-"
    return str(value) if value not in (None, "") else "-"


def format_family_markdown(rows: list[dict[str, Any]]) -> str:
    """docs/families.md's table: a family a row, names in backticks, ``|`` escaped."""
    def code(names: list[str]) -> str:
        return ", ".join(f"`{n}`" for n in names) or "none"

    lines = ["| family | tool parser (aliases) | reasoning parser (aliases) | a reply starts in | tokenizer "
             "| templates | peers' names | verified against |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tool = code(r["tool"]) if r["response"] == "default" else f"response parser `{r['response']}`"
        verified = r["verified"] or "its tokenizer and templates"
        cells = [f"`{r['family']}`", tool, code(r["reasoning"]), r["starts"], r["tokenizer"], _cell(r["templates"]),
                 _cell(r["peers"]), verified]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def format_rows(rows: list[dict[str, Any]], columns: tuple[str, ...] = _COLUMNS) -> str:
    """A plain-text table, one row a line (lists comma-separated, ``-`` for none)."""
    cells = [[_cell(row[c]) for c in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    return "\n".join(lines) + "\n"
