"""Peer implementations, each run as a subprocess in its own virtualenv under ``bench/.peers/``.

Our process never imports a peer: the runner module (``bench.peer_lmdeploy --serve``)
is started with the peer venv's interpreter and answers one JSON request per line.  A peer that cannot run
yields a status line saying why, and the benchmark goes on without it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


__all__ = ["PeerProcess", "PEERS_DIR"]

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(__file__).resolve().parent / ".peers"
SETUP_HINT = "run scripts/setup_bench_peers.sh"


def _lmdeploy_python() -> Path | None:
    python = PEERS_DIR / "lmdeploy" / "bin" / "python"
    return python if python.exists() else None


class PeerProcess:
    """One long-lived LMDeploy runner (``python -m bench.peer_lmdeploy --serve``): the driver
    sends it one request at a time and times its own side in between, so ours and the
    peer's samples alternate in one run.  ``unavailable`` says why it could not start."""

    def __init__(self) -> None:
        self.unavailable: str | None = None
        self._proc: subprocess.Popen | None = None
        python = _lmdeploy_python()
        if python is None:
            where = (PEERS_DIR / "lmdeploy").relative_to(ROOT)
            self.unavailable = f"unavailable (no virtualenv at {where}; {SETUP_HINT})"
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
