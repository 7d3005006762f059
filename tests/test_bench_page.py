"""bench.page: each driver rewrites only its own section of docs/benchmarks.md."""

from pathlib import Path

import pytest

from bench.page import read_section, write_section


def test_sections_are_replaced_in_place_and_others_kept(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\nintro\n", encoding="utf-8")
    write_section("stack", "| a |\n", page)
    write_section("peers", "| b |", page)
    write_section("stack", "| c |", page)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nintro\n")
    assert read_section("stack", page) == "| c |"
    assert read_section("peers", page) == "| b |"
    assert text.index("bench:stack") < text.index("bench:peers")
    assert "| a |" not in text


def test_missing_section_and_bad_name(tmp_path: Path) -> None:
    assert read_section("stack", tmp_path / "none.md") is None
    with pytest.raises(ValueError, match="section name"):
        write_section("Bad Name", "x", tmp_path / "p.md")
