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

from .timing import Settings

__all__ = ["PeerRun", "PEERS_DIR", "run_lmdeploy", "vllm_hermes"]

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


def run_lmdeploy(configs: list[tuple[str, str, int, int | None]], settings: Settings, timeout: float) -> PeerRun:
    python = PEERS_DIR / "lmdeploy" / "bin" / "python"
    if not python.exists():
        return _unavailable("lmdeploy", f"no virtualenv at {python.parent.parent.relative_to(ROOT)}; {SETUP_HINT}")
    job = {"configs": configs, "settings": list(settings), "config_timeout": 180}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        proc = subprocess.run(
            [str(python), "-m", "bench.peer_lmdeploy"],
            cwd=ROOT,
            env=env,
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return _unavailable("lmdeploy", f"runner timed out after {timeout:.0f} s")
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return _unavailable("lmdeploy", f"runner exited {proc.returncode}: {last}")
    data = json.loads(proc.stdout)
    status = "ok" if not data.get("torch_imported") else "ok (but torch was imported)"
    return PeerRun("lmdeploy", data["impl"], status, data["records"], data["errors"])


def vllm_hermes() -> PeerRun:
    """vLLM's hermes tool parser needs torch; a ``bench/.peers/vllm`` venv is not made by the setup script."""
    return _unavailable(
        "vllm-hermes",
        "vllm 0.33.0: vllm/tool_parsers/abstract_tool_parser.py imports vllm.sampling_params, which imports "
        "vllm.utils.torch_utils -> `import torch` at module level, and Hermes2ProToolParser.__init__ requires a "
        "Hugging Face tokenizer; not installed (no torch here)",
    )
