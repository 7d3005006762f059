"""The peers' serving layers, each run by ``peer_runner`` in its engine's own venv.

The venvs are the ones ``scripts/setup_vllm.sh`` / ``scripts/setup_sglang.sh`` build under
``~/.cache/lmparse/engines`` (``$LMPARSE_ENGINES_CACHE``); a peer whose venv is missing is
reported as not installed, one that runs past the time limit as such.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .load import ROOT, _env

__all__ = ["PEERS", "peer_python", "run_peer"]

PEERS = {"vllm": "vllm-0.33.0", "sglang": "sglang-0.5.23"}
# What each setup script writes once its venv is whole.
_DONE = {"vllm": ".complete", "sglang": ".engine-ok"}


def peer_python(peer: str) -> Path | None:
    cache = Path(os.environ.get("LMPARSE_ENGINES_CACHE", Path.home() / ".cache" / "lmparse" / "engines"))
    python = cache / PEERS[peer] / "bin" / "python"
    return python if (python.parent.parent / _DONE[peer]).exists() and python.exists() else None


def run_peer(peer: str, payload: str, timeout: float) -> dict:
    """The runner's JSON, or ``{"status": "not installed" | "ran past N s" | "failed: ..."}``."""
    python = peer_python(peer)
    if python is None:
        return {"status": f"not installed (run scripts/setup_{peer}.sh)"}
    env = _env()
    env.setdefault("VLLM_TARGET_DEVICE", "cpu")
    try:
        out = subprocess.run([str(python), "-m", "bench.serving.peer_runner", peer], input=payload, cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"ran past {timeout:g} s"}
    if out.returncode != 0:
        return {"status": "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:200]}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["status"] = "ok"
    return result
