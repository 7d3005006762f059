"""The compatibility table of docs/plugins.md: one row per (reply, engine, delivery), produced by
each engine's tests and checked against the page.

Every engine's suite computes its rows (the reply through the engine's serving code with the
``lmparse-*`` plugin, and with the engine's own parser for the family, each compared with
lmparse's own ``parse_complete``) and calls :func:`check_or_update`. By default it asserts the
page holds exactly those rows for that engine, so the page cannot go stale; with
``LMPARSE_UPDATE_DOCS=1`` it rewrites that engine's rows in place and leaves the other engines'.

Stdlib only: it runs in every engine's venv and in the main one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
ENGINES = ("vLLM 0.33.0", "SGLang 0.5.23", "LMDeploy 0.18.0")  # the order rows appear in
HEADER = ("| reply | engine | delivery | `lmparse-*` plugin | engine's own parser | its result |\n"
          "|---|---|---|---|---|---|")
BEGIN, END = "<!-- compat -->", "<!-- /compat -->"

Reply = tuple[str, str, tuple[tuple[str, str], ...]]  # content, reasoning, calls (name, arguments)


@dataclass(frozen=True)
class Row:
    reply: str  # which reply: the family and what is hard about it
    engine: str  # one of ENGINES
    delivery: str  # "non-stream", "stream, 1 token", ...
    plugin: str  # verdict for the lmparse-* parsers (see verdict)
    own: str  # the engine's in-tree parser names for the family
    own_result: str  # verdict for them

    def markdown(self) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in astuple(self)) + " |"


def _arguments(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def verdict(got: Reply, want: Reply) -> str:
    """``same`` when content and reasoning are equal and the calls carry the same names and the
    same JSON arguments (engines may re-serialize JSON); otherwise what differs."""
    parts = []
    if [(n, _arguments(a)) for n, a in got[2]] != [(n, _arguments(a)) for n, a in want[2]]:
        if len(got[2]) != len(want[2]):
            parts.append(f"calls: {len(got[2])} of {len(want[2])}")
        else:
            parts.append("call arguments differ")
    for field, mine, theirs in (("content", got[0], want[0]), ("reasoning", got[1], want[1])):
        if mine != theirs:
            parts.append(f"{field} {_short(mine)} (lmparse: {_short(theirs)})")
    return "; ".join(parts) or "same"


def _short(text: str, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def failure(exc: BaseException) -> str:
    """The cell for a parser that raised (an engine's in-tree parser may; lmparse's must not)."""
    return f"raises {type(exc).__name__}"


def _split(text: str) -> tuple[str, list[str], str]:
    match = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    if match is None:
        raise AssertionError(f"{DOC} lost its {BEGIN} ... {END} markers")
    lines = [line for line in match.group(1).splitlines() if line.startswith("| ")]
    return text[: match.start()], lines[1:], text[match.end():]  # lines[0] is the header


def _engine_of(line: str) -> str:
    cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
    return cells[1]


def documented(engine: str, doc: Path = DOC) -> list[str]:
    """The page's rows for ``engine``, as markdown lines."""
    _, lines, _ = _split(doc.read_text(encoding="utf-8"))
    return [line for line in lines if _engine_of(line) == engine]


def update(engine: str, rows: Sequence[Row], doc: Path = DOC) -> None:
    """Replace ``engine``'s rows on the page, keeping the other engines' rows and their order."""
    before, lines, after = _split(doc.read_text(encoding="utf-8"))
    by_engine: dict[str, list[str]] = {name: [] for name in ENGINES}
    for line in lines:
        by_engine.setdefault(_engine_of(line), []).append(line)
    by_engine[engine] = [row.markdown() for row in rows]
    body = "\n".join([HEADER, *(line for group in by_engine.values() for line in group)])
    doc.write_text(f"{before}{BEGIN}\n{body}\n{END}{after}", encoding="utf-8")


def check_or_update(engine: str, rows: Sequence[Row], doc: Path = DOC) -> None:
    assert engine in ENGINES, engine
    assert all(row.engine == engine for row in rows)
    if os.environ.get("LMPARSE_UPDATE_DOCS") == "1":
        update(engine, rows, doc)
        return
    want = [row.markdown() for row in rows]
    assert documented(engine, doc) == want, (
        f"docs/plugins.md's compatibility rows for {engine} are not what the tests produce; "
        "rerun with LMPARSE_UPDATE_DOCS=1 and review the diff")
