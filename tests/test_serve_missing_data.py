"""A family whose own chat template or tokenizer is missing from the test data is served on
ChatML prompts and pseudo-tokens: that fallback is loud (a warning naming the missing files
and how to get them) and ``lmparse serve --list-families`` does not call the family ready.

The data directory is built per test from links into the real test data, so each case
controls exactly which files exist.
"""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("starlette")

from lmparse.cli import main  # noqa: E402
from lmparse.serve.app import simulated_binding  # noqa: E402
from lmparse.serve.families import FAMILIES, missing_data  # noqa: E402
from tests.support.tokenizers import testdata_dir as real_data_dir  # noqa: E402

GEMMA_TEMPLATE = "templates/google-gemma-4-31B-it.jinja"
KIMI_TEMPLATE = "templates/Kimi-K3.jinja"


def linked(tmp_path, *paths: str):
    """A data directory holding links to ``paths`` of the real test data (skip without them)."""
    real = real_data_dir()
    if real is None or not all((real / p).exists() for p in paths):
        pytest.skip(f"needs {', '.join(paths)} in the tokenizer test data (run `make testdata`)")
    root = tmp_path / "data"
    root.mkdir()
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(real / path)
    return root


def family_line(capsys, name: str) -> str:
    assert main(["serve", "--list-families"]) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith(f"{name} "))


def test_missing_data_names_the_template_and_the_tokenizer_directory(tmp_path):
    assert missing_data(FAMILIES["gemma4"], tmp_path) == [f"{GEMMA_TEMPLATE} (chat template)",
                                                          "gemma-4/ (tokenizer: tokenizer.json.gz or o200k_base.tiktoken)"]
    assert missing_data(FAMILIES["kimi-k3"], None) == [f"{KIMI_TEMPLATE} (chat template)"]
    # A family that declares neither uses ChatML and pseudo-tokens by design: nothing is missing.
    assert missing_data(FAMILIES["zaya"], None) == []


def test_serving_a_family_without_its_data_warns_with_what_is_missing(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("LMPARSE_TESTDATA", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="lmparse.serve"):
        binding = simulated_binding(FAMILIES["gemma4"])
    assert binding.engine.template is None and not binding.engine.tokenizer.real  # the fallback happened
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert GEMMA_TEMPLATE in warnings[0] and "gemma-4/" in warnings[0]
    assert "ChatML prompts and pseudo-tokens" in warnings[0] and "make testdata" in warnings[0]


def test_serving_a_family_with_its_data_is_quiet_and_uses_it(tmp_path, monkeypatch, caplog):
    root = linked(tmp_path, KIMI_TEMPLATE)
    monkeypatch.setenv("LMPARSE_TESTDATA", str(root))
    with caplog.at_level(logging.WARNING, logger="lmparse.serve"):
        binding = simulated_binding(FAMILIES["kimi-k3"])
    assert binding.engine.template is not None and binding.engine.template.name == "Kimi-K3.jinja"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_list_families_says_what_a_family_lacks(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LMPARSE_TESTDATA", str(tmp_path))
    line = family_line(capsys, "gemma4")
    assert "[ready]" not in line
    assert "not ready" in line and GEMMA_TEMPLATE in line and "gemma-4/" in line


def test_list_families_calls_a_family_ready_once_its_data_is_there(tmp_path, monkeypatch, capsys):
    root = linked(tmp_path, GEMMA_TEMPLATE, "gemma-4/tokenizer.json.gz", "gemma-4/tokenizer_config.json")
    monkeypatch.setenv("LMPARSE_TESTDATA", str(root))
    assert family_line(capsys, "gemma4").endswith("[ready]")
    # Only the template present: the line names the tokenizer alone.
    (root / "gemma-4" / "tokenizer.json.gz").unlink()
    line = family_line(capsys, "gemma4")
    assert "not ready" in line and "gemma-4/" in line and GEMMA_TEMPLATE not in line
