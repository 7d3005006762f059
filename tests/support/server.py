"""A live ``lmparse serve`` on a loopback port, for tests that use real HTTP clients."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """``lmparse serve`` in a subprocess; ``url`` is its base URL once ``/health`` answers."""

    def __init__(self, args: Sequence[str], timeout: float = 60.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "lmparse.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--quiet", "--log-level", "warning", *args]
        self._log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._log, text=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                self._log.seek(0)
                raise RuntimeError(f"lmparse serve exited {self.proc.returncode}: {self._log.read()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("lmparse serve did not become healthy in time")
            time.sleep(0.1)

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(self.url + "/metrics", timeout=5) as r:
            text = r.read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name) and line[len(name)] in " {":
                total += float(line.rsplit(" ", 1)[1])
        return total

    def log_text(self) -> str:
        """What the server has written to stderr so far (read at an offset: the child shares
        the file's position, so it must not move)."""
        fd = self._log.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def stop(self) -> None:
        stop_process(self.proc)
        self._log.close()


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def live_server_fixture(*args: str, scope: str = "module"):
    """A pytest fixture serving ``lmparse serve ARGS`` for a module (stopped after it)."""

    @pytest.fixture(scope=scope)
    def fixture():
        live = LiveServer(list(args))
        yield live
        live.stop()

    return fixture
