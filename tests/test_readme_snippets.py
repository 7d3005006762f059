"""Every ```python block of README.md and docs/*.md runs as a reader would paste it: each in a
fresh namespace, its output captured, and it must not raise.

A block's first line may say how it runs:

- ``# doc-test: serve``: it talks to ``make serve`` (``127.0.0.1:8000``); the test starts
  ``lmparse serve`` on a free port and points the block at it.
- ``# doc-test: skip (REASON)``: it cannot run alone (an excerpt of a source file, a placeholder
  path, a real engine); the reason is required, and ``SKIPPED_AT_MOST`` keeps that list small.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
_MARKER = re.compile(r"#\s*doc-test:\s*(\w+)\s*(.*)")
SKIPPED_AT_MOST = 7
_CLIENT_SDKS = {"openai", "anthropic", "agents", "websockets"}  # a serve block's client (tests/test_wheel.py's venvs lack them)


_PRINTS = re.compile(r"\n*prints\n\n```\n(.*?)^```", re.M | re.S)


def _printed(after: str) -> str | None:
    """What the page says the block prints: a plain block right after it, introduced by "prints"."""
    m = _PRINTS.match(after)
    return m.group(1) if m else None


def _same_output(text: str) -> str:
    # Call ids are random: the page writes them as call_….
    return re.sub(r"call_[0-9a-f]+", "call_…", text).strip()


def _blocks() -> list[tuple[str, int, str, str | None]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((str(page.relative_to(ROOT)), line, m.group(1), _printed(text[m.end():])))
    return found


BLOCKS = _blocks()


def _marker(code: str) -> tuple[str, str]:
    first = code.split("\n", 1)[0]
    m = _MARKER.fullmatch(first.strip())
    return (m.group(1), m.group(2).strip()) if m else ("", "")


def test_the_pages_have_python_blocks_and_few_are_skipped():
    assert any(page == "README.md" for page, _, _, _ in BLOCKS)
    assert sum(expected is not None for page, _, _, expected in BLOCKS if page == "README.md") == 2
    kinds = [_marker(code) for _, _, code, _ in BLOCKS]
    assert all(kind in ("", "serve", "skip") for kind, _ in kinds), kinds
    assert all(reason.startswith("(") and len(reason) > 4 for kind, reason in kinds if kind == "skip"), \
        "a skipped block says why"
    assert sum(kind == "skip" for kind, _ in kinds) <= SKIPPED_AT_MOST


@pytest.fixture(scope="module")
def server_url():
    pytest.importorskip("uvicorn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "lmparse", "serve", "--port", str(port), "--token-rate", "0",
                             "--quiet"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line or "Uvicorn running on" in line:
            break
    if proc.poll() is not None:
        pytest.fail(f"lmparse serve did not start: {proc.stderr.read()}")
    yield f"http://127.0.0.1:{port}"
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("page, line, code, expected", BLOCKS, ids=[f"{p}:{n}" for p, n, _, _ in BLOCKS])
def test_python_block_runs(page, line, code, expected, request):
    kind, reason = _marker(code)
    if kind == "skip":
        pytest.skip(f"{page}:{line} cannot run alone {reason}")
    if kind == "serve":
        # http:// and ws:// alike: the page's port is make serve's.
        code = code.replace("127.0.0.1:8000", request.getfixturevalue("server_url").removeprefix("http://"))
    out = io.StringIO()
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, f"{page}:{line}", "exec"), namespace)  # noqa: S102 (the documentation's own code)
        except ModuleNotFoundError as exc:
            if kind != "serve" or exc.name not in _CLIENT_SDKS:
                raise
            pytest.skip(f"{page}:{line} needs the {exc.name} package (the dev extra has it)")
    if expected is not None:
        assert _same_output(out.getvalue()) == _same_output(expected)
    elif "print(" in code:
        assert out.getvalue().strip()


@pytest.mark.pure_only("it reads docstrings, which compiled methods need not keep")
def test_the_public_api_is_documented():
    """``help()`` on what README and docs/ use answers: every public name of ``lmparse`` and its
    public methods, the parser's ``stream_chunk`` / ``parse_complete`` first of all."""
    import inspect

    import lmparse
    from lmparse.response.base import BaseResponseParser, ResponseParser

    missing = []
    for name in lmparse.__all__:
        obj = getattr(lmparse, name)
        if not (inspect.getdoc(obj) or "").strip() and not isinstance(obj, str):
            missing.append(name)
        if inspect.isclass(obj):
            missing += [f"{name}.{m}" for m, v in vars(obj).items()
                        if not m.startswith("_") and callable(v) and not (v.__doc__ or "").strip()]
    for cls in (ResponseParser, BaseResponseParser):
        for m in ("stream_chunk", "parse_complete", "reasoning_tokens", "dropped", "held_chars"):
            v = getattr(cls, m)
            doc = (v.fget if isinstance(v, property) else v).__doc__
            if not (doc or "").strip():
                missing.append(f"{cls.__name__}.{m}")
    assert not missing, missing
    doc = inspect.getdoc(ResponseParser.stream_chunk)
    for needed in ("(delta, has_tools)", "final=True", "token_ids", "dropped"):
        assert needed in doc, needed
