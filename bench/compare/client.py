"""Peer workers as seen from the driver: where each peer's interpreter is, start, ask, kill.

A worker is ``python -m bench.compare.worker PEER`` run by the peer virtualenv's own
interpreter, from the checkout's root (so it imports this ``bench`` package), without
``PYTHONPATH``.  A request that gets no answer within its deadline kills the worker's
process group; the next request starts a fresh worker and reloads the cases it needs.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from .cases import Case
from .peer_smg import driver_path

__all__ = ["Timeout", "PeerGone", "Worker", "peer_python", "unavailable", "PEER_VERSIONS"]

ROOT = Path(__file__).resolve().parents[2]
PEER_VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23", "lmdeploy": "0.18.0", "smg": "reasoning-parser 1.6.0",
                 "pure": "pure core"}
_START_TIMEOUT = 180.0  # importing vLLM with torch on a busy 2-core machine


class Timeout(Exception):
    """The worker did not answer within the deadline (it has been killed)."""


class PeerGone(Exception):
    """The worker exited or could not start; the message says why."""


def peer_python(peer: str) -> Path:
    """``$LMPARSE_BENCH_<PEER>_PYTHON``, else where the setup scripts build the venv:
    bench/.peers/lmdeploy (scripts/setup_bench_peers.sh) or ~/.cache/lmparse/engines/<peer>-<version>
    (scripts/setup_vllm.sh, scripts/setup_sglang.sh).  SMG's worker is this interpreter: its
    parser is the Rust binary the worker starts (``bench.compare.peer_smg``); so is the pure
    core's, started with ``LMPARSE_PURE=1`` (``bench.compare.peer_pure``)."""
    configured = os.environ.get(f"LMPARSE_BENCH_{peer.upper()}_PYTHON")
    if configured:
        return Path(configured)
    if peer in ("smg", "pure"):
        return Path(sys.executable)
    if peer == "lmdeploy":
        return ROOT / "bench" / ".peers" / "lmdeploy" / "bin" / "python"
    cache = Path(os.environ.get("LMPARSE_ENGINES_CACHE", Path.home() / ".cache" / "lmparse" / "engines"))
    return cache / f"{peer}-{PEER_VERSIONS[peer]}" / "bin" / "python"


def unavailable(peer: str) -> str | None:
    """Why ``peer`` cannot run on this machine (and which script sets it up), or None."""
    if peer == "smg":
        binary = driver_path()
        return None if binary.exists() else f"unavailable: no driver at {binary} (run scripts/setup_rust_peer.sh)"
    python = peer_python(peer)
    if python.exists():
        return None
    script = "setup_bench_peers.sh" if peer == "lmdeploy" else f"setup_{peer}.sh"
    return f"unavailable: no interpreter at {python} (run scripts/{script})"


class Worker:
    def __init__(self, peer: str, python: Path) -> None:
        self.peer, self.python = peer, python
        self.impl: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._loaded: set[str] = set()
        self._stderr = Path(os.environ.get("TMPDIR", "/tmp")) / f"lmparse-compare-{peer}-{os.getpid()}.log"

    def _start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["VLLM_TARGET_DEVICE"] = "cpu"
        env.pop("LMPARSE_PURE", None)
        if self.peer == "pure":
            env["LMPARSE_PURE"] = "1"
        with open(self._stderr, "a", encoding="utf-8") as log:
            self._proc = subprocess.Popen(
                [str(self.python), "-m", "bench.compare.worker", self.peer], cwd=ROOT, env=env, text=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        self._loaded = set()
        answer = self._ask({"op": "hello"}, _START_TIMEOUT)
        if "impl" not in answer:
            self.stop()
            raise PeerGone(answer.get("error", "the worker did not say hello"))
        self.impl = answer["impl"]

    def _ask(self, request: dict, timeout: float) -> dict:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            raise PeerGone(self._last_words()) from None
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.stop()
                raise Timeout(f"no answer within {timeout:.0f} s")
        line = proc.stdout.readline()
        if not line:
            self.stop()
            raise PeerGone(self._last_words())
        answer: dict = json.loads(line)
        return answer

    def _last_words(self) -> str:
        try:
            lines = self._stderr.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            lines = []
        return f"worker exited: {lines[-1] if lines else 'no output'} (log {self._stderr})"

    def request(self, request: dict, case: tuple[str, Case, dict] | None, timeout: float) -> dict:
        """Ask, (re)starting the worker and loading ``case`` (key, case, parsers) first if needed."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        if case is not None and case[0] not in self._loaded:
            key, value, parsers = case
            self._ask({"op": "load", "key": key, "case": value._asdict(), "parsers": parsers}, timeout)
            self._loaded.add(key)
        started = time.perf_counter()
        answer = self._ask(request, timeout)
        answer.setdefault("round_trip", time.perf_counter() - started)
        return answer

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
