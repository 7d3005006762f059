"""``lmparse check-tokenizer``: declared token-aligned prefixes against the real tokenizers in the test data."""

from __future__ import annotations

import json

import pytest

from lmparse import ToolParserManager
from lmparse.cli import main

from .support import tokenizers
from .support.prefixes import observed_prefixes as support_observed

pytest.importorskip("tokenizers")
from lmparse.tokencheck import check_marker, holds, load_hf_tokenizer, observed_prefixes  # noqa: E402


def _dir(name: str) -> str:
    root = tokenizers.testdata_dir()
    path = root / name if root is not None else None
    if path is None or not path.is_dir():
        pytest.skip(f"tokenizer {name} is not in the test data")
    return str(path)


def _run(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check-tokenizer", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


# (tool parser, reasoning parser, tokenizer directory): each family's own vocabulary
FAMILIES = [
    ("qwen", "qwen3", "qwen3"),
    ("qwen3coder", "qwen3.5", "qwen3"),
    ("glm47", "glm45", "glm-4.7-flash"),
    ("glm45", "glm45", "glm-4.5"),
    ("deepseek-v32", "deepseek-v32", "deepseek-v3.2"),
    ("deepseek-v4", "deepseek-v4", "deepseek-v4"),
    ("deepseek-v31", "deepseek-v3", "deepseek-v3.1"),
    ("minimax-m2", "minimax-m2", "minimax-m2"),
]


@pytest.mark.parametrize("tool,reasoning,tokenizer", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_declared_prefixes_hold_for_the_familys_tokenizer(capsys, tool, reasoning, tokenizer):
    code, report = _run(capsys, "--tool-parser", tool, "--reasoning-parser", reasoning, "--tokenizer", _dir(tokenizer))
    assert code == 0 and report["ok"], [m for m in report["markers"] if m["missing"]]
    close = next(m for m in report["markers"] if m["what"] == "tool close")
    assert close["marker"] == ToolParserManager.get(tool).tool_close_tag


def test_a_split_marker_the_parser_does_not_declare_is_a_mismatch(capsys):
    """QwQ's Qwen2.5 vocabulary splits ``</think>``; ``default`` declares the single-token case."""
    code, report = _run(capsys, "--reasoning-parser", "default", "--tokenizer", _dir("qwen2.5"))
    assert code == 1 and not report["ok"]
    end = next(m for m in report["markers"] if m["what"] == "reasoning end")
    assert "</think" in end["missing"] and not end["single_token"]


def test_another_familys_vocabulary_breaks_the_dsml_prefixes(capsys):
    code, report = _run(capsys, "--tool-parser", "deepseek-v32", "--tokenizer", _dir("qwen3"))
    assert code == 1
    assert any(m["missing"] for m in report["markers"])


def test_a_declared_prefix_this_tokenizer_never_makes_fails_only_strictly():
    """A tuple is the union over the family's tokenizers, so one tokenizer may not produce
    every entry: that is a note, and a mismatch only with ``--strict``."""
    tok = load_hf_tokenizer(_dir("qwen3"))
    report = check_marker(tok, "value close", "</parameter>", ("</parameter", "</param", "</"))
    assert (report.missing, report.extra) == ([], ["</param"])
    assert holds([report]) and not holds([report], strict=True)


def test_special_markers_that_skipping_special_tokens_erases(capsys):
    """Gemma 4's markers are single special tokens: skip_special_tokens must be off upstream."""
    code, report = _run(capsys, "--marker", "<|tool_call>", "--marker", "<|\"|>", "--tokenizer", _dir("gemma-4"))
    assert code == 0
    for m in report["markers"]:
        assert m["single_token"] and m["special"] and m["erased_by_skip_special"]
        assert m["observed"] == []


def test_plain_added_tokens_survive_skipping_special_tokens(capsys):
    code, report = _run(capsys, "--marker", "<tool_call>", "--tokenizer", _dir("qwen3"))
    (marker,) = report["markers"]
    assert marker["single_token"] and not marker["special"] and not marker["erased_by_skip_special"]


def test_gemma4_declarations_hold_for_the_gemma4_tokenizer(capsys):
    if "gemma4" not in ToolParserManager:
        pytest.skip("the gemma4 dialect is built on branch i13-gemma4")
    code, report = _run(capsys, "--tool-parser", "gemma4", "--tokenizer", _dir("gemma-4"))
    assert code == 0, [m for m in report["markers"] if m["missing"]]


@pytest.mark.parametrize("tokenizer,marker", [("qwen3", "</parameter>"), ("deepseek-v3.2", "</｜DSML｜parameter>"),
                                              ("qwen2.5", "</think>"), ("minimax-m2", "</parameter>")])
def test_its_contexts_find_at_least_what_the_test_suite_finds(tokenizer, marker):
    found = set(observed_prefixes(load_hf_tokenizer(_dir(tokenizer)), marker))
    assert found >= support_observed(tokenizer, marker)


def test_a_missing_tokenizer_is_an_error_not_a_crash(capsys, tmp_path):
    assert main(["check-tokenizer", "--tool-parser", "qwen", "--tokenizer", str(tmp_path)]) == 2
    assert "holds no tokenizer.json" in capsys.readouterr().err
