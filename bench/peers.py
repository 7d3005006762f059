"""Peer implementations, each run as a subprocess in its own virtualenv under ``bench/.peers/``.

Our process never imports a peer: the runner module (e.g. ``bench.peer_lmdeploy``)
is started with the peer venv's interpreter, reads a JSON job on stdin and prints
JSON rows in the same shape as ours (``timing.record``).  A peer that cannot run
yields a status line saying why, and the benchmark goes on without it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable

from .timing import Settings

__all__ = ["PeerRun", "PeerProcess", "PEERS_DIR", "run_lmdeploy", "run_lmdeploy_calls", "vllm_hermes"]

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(__file__).resolve().parent / ".peers"
SETUP_HINT = "run scripts/setup_bench_peers.sh"


class PeerRun(NamedTuple):
    name: str
    impl: str | None  # e.g. "lmdeploy 0.18.0" once it ran
    status: str  # "ok" or "unavailable (<reason>)"
    records: list[dict]
    errors: list[dict]  # configurations the peer got wrong or could not finish


def _unavailable(name: str, reason: str) -> PeerRun:
    return PeerRun(name, None, f"unavailable ({reason})", [], [])


def _lmdeploy_python() -> Path | None:
    python = PEERS_DIR / "lmdeploy" / "bin" / "python"
    return python if python.exists() else None


def _lmdeploy_missing() -> PeerRun:
    where = (PEERS_DIR / "lmdeploy").relative_to(ROOT)
    return _unavailable("lmdeploy", f"no virtualenv at {where}; {SETUP_HINT}")


def _run_runner(python: Path, args: list[str], stdin: str, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        [str(python), "-m", "bench.peer_lmdeploy", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _run_lmdeploy_job(job: dict, timeout: float) -> PeerRun:
    python = _lmdeploy_python()
    if python is None:
        return _lmdeploy_missing()
    try:
        proc = _run_runner(python, [], json.dumps(job), timeout)
    except subprocess.TimeoutExpired:
        return _unavailable("lmdeploy", f"runner timed out after {timeout:.0f} s")
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return _unavailable("lmdeploy", f"runner exited {proc.returncode}: {last}")
    data = json.loads(proc.stdout)
    status = "ok" if not data.get("torch_imported") else "ok (but torch was imported)"
    return PeerRun("lmdeploy", data["impl"], status, data["records"], data["errors"])


def run_lmdeploy(configs: list[tuple[str, str, int, int | None]], settings: Settings, timeout: float) -> PeerRun:
    """The Qwen stack fixtures (``section, kind, size, chunk``), built by the runner itself."""
    return _run_lmdeploy_job({"configs": configs, "settings": list(settings), "config_timeout": 180}, timeout)


def _lmdeploy_tool_parsers(python: Path) -> list[str] | None:
    """The tool parser names LMDeploy registers; None if its runner cannot say."""
    try:
        proc = _run_runner(python, ["--names"], "", 120)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def run_lmdeploy_calls(
    calls_for: Callable[[set[str]], list[dict]], settings: Settings, timeout: float
) -> PeerRun:
    """Dialect replies.  ``calls_for(names LMDeploy registers)`` gives the job's items, each
    ``{"names", "reply" (CallReply fields), "runs": [[section, chunk], ...], "special_tokens"}``;
    rows come back with a ``dialect`` and the ``peer_parser`` that ran."""
    python = _lmdeploy_python()
    if python is None:
        return _lmdeploy_missing()
    names = _lmdeploy_tool_parsers(python)
    if names is None:
        return _unavailable("lmdeploy", "its runner could not list its tool parsers (python -m bench.peer_lmdeploy "
                                        "--names)")
    calls = calls_for(set(names))
    return _run_lmdeploy_job({"calls": calls, "settings": list(settings), "config_timeout": 180}, timeout)


class PeerProcess:
    """One long-lived LMDeploy runner (``python -m bench.peer_lmdeploy --serve``): the driver
    sends it one request at a time and times its own side in between, so ours and the
    peer's samples alternate in one run.  ``unavailable`` says why it could not start."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self._proc: subprocess.Popen | None = None
        python = _lmdeploy_python()
        if python is None:
            self.unavailable = _lmdeploy_missing().status
            return
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        self._proc = subprocess.Popen(
            [str(python), "-m", "bench.peer_lmdeploy", "--serve"], cwd=ROOT, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )

    def request(self, **fields: object) -> dict:
        """Send one request and wait for its answer (``{"ok": False, "error": ...}`` on failure)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            return {"ok": False, "error": self.unavailable or "not running"}
        try:
            proc.stdin.write(json.dumps(fields) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (OSError, ValueError) as exc:
            return {"ok": False, "error": f"runner gone: {exc}"}
        if not line:
            return {"ok": False, "error": f"runner exited {proc.poll()}"}
        answer: dict = json.loads(line)
        return answer

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None

    def __enter__(self) -> PeerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def vllm_hermes() -> PeerRun:
    """vLLM's hermes tool parser needs torch; a ``bench/.peers/vllm`` venv is not made by the setup script."""
    return _unavailable(
        "vllm-hermes",
        "vllm 0.33.0: vllm/tool_parsers/abstract_tool_parser.py imports vllm.sampling_params, which imports "
        "vllm.utils.torch_utils -> `import torch` at module level, and Hermes2ProToolParser.__init__ requires a "
        "Hugging Face tokenizer; not installed (no torch here)",
    )
