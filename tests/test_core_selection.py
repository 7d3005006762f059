"""Which parser core loads (``lmparse/_core.py``): the compiled one when its build is there and
current, the pure one when ``LMPARSE_PURE`` asks for it or the build is stale or missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmparse import _core

ROOT = Path(__file__).resolve().parents[1]
PROBE = "import lmparse, lmparse.tools.json_guard as g; print(lmparse.core()); print(g.__file__)"


def _run(cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("LMPARSE_PURE", "PYTHONPATH")}
    return subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env={**clean, "PYTHONPATH": str(cwd), **env},
                          capture_output=True, text=True, check=True)


def _built() -> bool:
    return all(_core._extension(module) is not None for module in _core.COMPILED_MODULES)


def test_lmparse_pure_loads_every_module_from_its_source() -> None:
    out = _run(ROOT, LMPARSE_PURE="1").stdout.splitlines()
    assert out[0] == "pure (LMPARSE_PURE is set)"
    assert out[1].endswith("json_guard.py")


@pytest.mark.skipif(not _built(), reason="no compiled build (make compiled)")
def test_a_current_build_loads_compiled() -> None:
    out = _run(ROOT).stdout.splitlines()
    assert out[0] == f"compiled (mypyc, {len(_core.COMPILED_MODULES)} modules)"
    assert not out[1].endswith(".py")


@pytest.mark.skipif(not _built(), reason="no compiled build (make compiled)")
def test_a_source_edited_after_the_build_loads_the_pure_core_and_says_why(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "lmparse", tmp_path / "lmparse", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "lmparse" / "markers.py", "a") as source:
        source.write("# an edit\n")
    result = _run(tmp_path)
    out = result.stdout.splitlines()
    assert out[0].startswith("pure (the compiled build is stale (lmparse.markers changed since")
    assert out[1].endswith("json_guard.py")
    assert "loading the pure core" in result.stderr


def test_a_partial_build_loads_the_pure_core(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "lmparse", tmp_path / "lmparse", ignore=shutil.ignore_patterns("__pycache__"))
    built = sorted((tmp_path / "lmparse").rglob("*.so"))
    for path in built[1:]:
        path.unlink()
    out = _run(tmp_path).stdout.splitlines()
    assert out[0].startswith("pure (")
    assert out[1].endswith("json_guard.py")


@pytest.mark.skipif(not _built(), reason="no compiled build (make compiled)")
def test_times_do_not_matter_only_contents(tmp_path: Path) -> None:
    """A wheel's files carry no usable times: a source rewritten unchanged keeps the build."""
    shutil.copytree(ROOT / "lmparse", tmp_path / "lmparse", ignore=shutil.ignore_patterns("__pycache__"))
    source = tmp_path / "lmparse" / "markers.py"
    source.write_bytes(source.read_bytes())
    assert _run(tmp_path).stdout.startswith("compiled (")
