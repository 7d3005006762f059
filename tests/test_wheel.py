"""The release artefacts: ``python -m build`` makes an sdist and, from it, a wheel; ``twine check``
passes both; the wheel, installed alone into a fresh venv of each supported Python found on the
machine (3.11 always; 3.10, the oldest claimed, and 3.12 where installed), has the ``lmparse``
command, the vLLM and SGLang entry points and ``py.typed``, and parses."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import lmparse

ROOT = Path(__file__).resolve().parent.parent
OTHER_PYTHONS = ("3.10", "3.12")  # besides the one running the tests (3.11 in the venv)

pytest.importorskip("build")


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LMPARSE_", "VIRTUAL_ENV"))}
    return env


def find_python(version: str) -> str | None:
    """An interpreter of ``version``: ``pythonX.Y`` on PATH if it runs, else one pyenv installed."""
    roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    candidates = [shutil.which(f"python{version}") or ""]
    for root in filter(None, roots):
        candidates += sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}")))
    for path in filter(None, candidates):
        try:
            done = subprocess.run([path, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                                  capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip() == version:
            return path
    return None


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the venv's setuptools (the dev extra), so no download; the wheel is built
    # from the sdist, which is how an index's users would build it.
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob(f"lmparse-{lmparse.__version__}-py3-none-any.whl")
    return wheel


def test_twine_check_passes_the_wheel_and_the_sdist(dist):
    pytest.importorskip("twine")
    files = sorted(str(p) for p in dist.iterdir())
    assert len(files) == 2, files
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_wheel_is_pure_and_typed_and_the_sdist_carries_the_tests(dist):
    with zipfile.ZipFile(_wheel(dist)) as whl:
        names = set(whl.namelist())
        metadata = whl.read(f"lmparse-{lmparse.__version__}.dist-info/METADATA").decode()
    assert "lmparse/py.typed" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    assert f"lmparse-{lmparse.__version__}.dist-info/licenses/LICENSE" in names
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Python: >=3.10" in metadata
    for version in ("3.10", "3.11", "3.12"):
        assert f"Programming Language :: Python :: {version}" in metadata
    assert 'Requires-Dist: openai-harmony; extra == "serve"' in metadata  # --family gpt-oss
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    for needed in ("LICENSE", "CHANGELOG.md", "README.md", "Makefile", "tests/conftest.py", "tests/test_wheel.py",
                   "tests/support/__init__.py", "scripts/fetch_testdata.py", "scripts/testdata_manifest.tsv",
                   "docs/install.md", "reliability/__main__.py", "bench/page.py", "_build_backend/lmparse_backend.py"):
        assert needed in members, needed
    assert not [m for m in members if m.endswith(".so") or "__pycache__" in m]


_CHECK = """
import json, sys
from importlib.metadata import distribution, entry_points, version
import lmparse
from lmparse import create_parser

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
p = create_parser(tool_parser="qwen3", reasoning_parser="qwen3", request={"tools": tools})
message = p.parse_complete('<think>Paris?</think><tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
                           '\\n</tool_call>')
eps = {group: sorted(f"{e.name}={e.value}" for e in entry_points(group=group))
       for group in ("console_scripts", "vllm.general_plugins", "sglang.srt.plugins")}
print(json.dumps({"file": lmparse.__file__, "version": version("lmparse"), "module_version": lmparse.__version__,
                  "core": lmparse.core(), "message": message.to_dict(), "entry_points": eps,
                  "license": distribution("lmparse").metadata["License-Expression"]}))
"""


def _pythons() -> list:
    params = [pytest.param(sys.executable, id=f"{sys.version_info[0]}.{sys.version_info[1]}")]
    for version in OTHER_PYTHONS:
        path = find_python(version)
        params.append(pytest.param(path, id=version, marks=pytest.mark.skipif(
            path is None, reason=f"no Python {version} on this machine (PATH or pyenv)")))
    return params


@pytest.mark.parametrize("python", _pythons())
def test_the_wheel_installed_alone_into_a_fresh_venv_runs(dist, python, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # The tests' pip installs into the new venv: nothing from an index, no dependency (the core has none).
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-index",
                           "--no-deps", "--disable-pip-version-check", str(_wheel(dist))],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    env, cwd = _clean_env(), tmp_path  # away from the checkout: the installed copy is imported
    parsers = subprocess.run([str(venv / "bin" / "lmparse"), "parsers"], capture_output=True, text=True,
                             timeout=120, env=env, cwd=cwd)
    assert parsers.returncode == 0, parsers.stderr
    assert parsers.stdout.startswith(f"# lmparse {lmparse.__version__}, pure")
    assert " qwen3coder " in parsers.stdout and " gpt-oss " in parsers.stdout
    version = subprocess.run([str(venv / "bin" / "lmparse"), "--version"], capture_output=True, text=True,
                             timeout=60, env=env, cwd=cwd)
    assert version.stdout.startswith(f"lmparse {lmparse.__version__}, pure")
    check = subprocess.run([str(py), "-c", _CHECK], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout)
    assert found["file"].startswith(str(venv))
    assert found["version"] == found["module_version"] == lmparse.__version__
    assert found["license"] == "Apache-2.0"
    assert found["message"] == {
        "role": "assistant", "content": None, "reasoning_content": "Paris?",
        "tool_calls": [{"id": found["message"]["tool_calls"][0]["id"], "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    assert found["entry_points"] == {
        "console_scripts": ["lmparse=lmparse.cli:main"],
        "vllm.general_plugins": ["lmparse=lmparse.integrations.vllm:register"],
        "sglang.srt.plugins": ["lmparse=lmparse.integrations.sglang:register"]}
