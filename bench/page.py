"""docs/benchmarks.md is written by several drivers, each owning one section.

A section is the text between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``.
``write_section`` replaces that text (or appends the section when the page lacks it)
and leaves every other section as it was, so ``make bench`` and ``make bench-peers``
can regenerate their parts independently.  Plots go to ``docs/img/benchmarks/``.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PAGE", "IMAGES", "write_section", "read_section"]

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
IMAGES = ROOT / "docs" / "img" / "benchmarks"


def _markers(name: str) -> tuple[str, str]:
    if not re.fullmatch(r"[a-z0-9-]+", name):
        raise ValueError(f"section name {name!r}: lowercase letters, digits and '-' only")
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def read_section(name: str, page: Path = PAGE) -> str | None:
    """The section's current text, or None when the page has no such section."""
    start, end = _markers(name)
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        return None
    return text[i + len(start):j].strip("\n")


def write_section(name: str, markdown: str, page: Path = PAGE) -> None:
    """Replace section ``name`` of ``page`` with ``markdown`` (appended when absent)."""
    start, end = _markers(name)
    text = page.read_text(encoding="utf-8") if page.exists() else "# Benchmarks\n"
    block = f"{start}\n{markdown.strip()}\n{end}"
    i, j = text.find(start), text.find(end)
    if i >= 0 and j > i:
        text = text[:i] + block + text[j + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
