"""``lmparse parsers``: every registered name, with aliases, syntax, streaming and structural tag."""

from __future__ import annotations

import json

import pytest

from lmparse import ReasoningParserManager, ResponseParserManager, ToolParserManager
from lmparse.catalog import parser_rows
from lmparse.cli import main

REGISTRIES = {"tool": ToolParserManager, "reasoning": ReasoningParserManager, "response": ResponseParserManager}


def _json_rows(capsys) -> list[dict]:
    assert main(["parsers", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_registered_name_is_listed_once_under_its_class(capsys):
    rows = _json_rows(capsys)
    for kind, registry in REGISTRIES.items():
        listed = [n for row in rows if row["kind"] == kind for n in (row["name"], *row["aliases"])]
        assert sorted(listed) == registry.names()
        for row in rows:
            if row["kind"] == kind:
                assert all(registry.get(a) is registry.get(row["name"]) for a in row["aliases"])


def test_tool_rows_come_from_what_each_dialect_declares():
    for row in parser_rows():
        if row["kind"] != "tool":
            continue
        cls = ToolParserManager.get(row["name"])
        assert row["syntax"] == cls.summary != "", f"{row['name']} declares no summary"
        assert row["streaming"] == cls.streaming != ""
        syntax = cls.call_syntax()  # None: the dialect cannot be constrained (MiniMax-M3's per-key closers; cohere-command)
        assert row["structural_tag"] == (syntax.arguments if syntax is not None else "-")


@pytest.mark.parametrize("name,starts", [("default", "in reasoning unless thinking is off"),
                                         ("step3p5", "always in reasoning"),
                                         ("mistral", "plain (the model opens reasoning)"),
                                         ("qwen3.5", "as the prompt's tail says (auto)")])
def test_reasoning_rows_say_where_a_reply_starts(name, starts):
    row = next(r for r in parser_rows() if r["kind"] == "reasoning" and r["name"] == name)
    assert starts in row["streaming"]


def test_the_table_has_a_header_and_one_line_per_parser(capsys):
    assert main(["parsers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# lmparse ") and lines[0].endswith(" core")  # the version and the core loaded
    lines = lines[1:]
    assert lines[0].split() == ["kind", "name", "aliases", "syntax", "streaming", "structural_tag"]
    assert len(lines) == 1 + len(parser_rows())
    qwen = next(line for line in lines if line.split()[:2] == ["tool", "qwen"])
    assert "granite4" in qwen and "json" in qwen.split()[-1]


def test_docs_families_table_is_the_generated_one(capsys):
    """docs/families.md lists every declared family: the table ``lmparse families --markdown`` prints."""
    from pathlib import Path

    assert main(["families", "--markdown"]) == 0
    table = capsys.readouterr().out
    doc = (Path(__file__).resolve().parents[1] / "docs" / "families.md").read_text(encoding="utf-8")
    between = doc.split("<!-- families:begin -->\n", 1)[1].split("<!-- families:end -->", 1)[0]
    assert between == table, "regenerate the table: .venv/bin/lmparse families --markdown"


def test_families_lists_every_declared_family(capsys):
    from lmparse.families import FAMILIES

    assert main(["families", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["family"] for r in rows] == sorted(f.name for f in FAMILIES)
    assert all(r["tool"] or r["response"] != "default" for r in rows)
    by_name = {r["family"]: r for r in rows}
    assert by_name["qwen3"]["layout"] == {"block_lead": "\n", "block_separator": "\n"}  # the qwen dialect's
    assert by_name["glm47"]["structural_tag"] == "glm_xml" and by_name["cohere-command"]["structural_tag"] == "-"
    assert by_name["gpt-oss"]["structural_tag"] == "json"  # Harmony describes its calls itself
