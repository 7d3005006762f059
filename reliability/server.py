"""A live ``lmparse serve`` subprocess: start, probe, read its resources and metrics, stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence

__all__ = ["Server", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``lmparse serve ARGS`` on a free loopback port; ``url`` answers once ``/health`` does."""

    started: list[str] = []  # every command line run, for the report

    def __init__(self, args: Sequence[str], timeout: float = 60.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = ["lmparse", "serve", "--host", "127.0.0.1", "--port", str(self.port), "--quiet",
                        "--log-level", "warning", *args]
        Server.started.append(" ".join(a if a.replace("-", "").replace(".", "").replace(",", "").replace(":", "")
                                       .replace("/", "").replace("_", "").isalnum() else repr(a) for a in self.command))
        self._log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen([sys.executable, "-m", "lmparse.cli", *self.command[1:]],
                                     stdout=subprocess.DEVNULL, stderr=self._log, text=True)
        deadline = time.monotonic() + timeout
        while not self._healthy():
            if self.proc.poll() is not None:
                raise RuntimeError(f"lmparse serve exited {self.proc.returncode}: {self.log_text()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("lmparse serve did not become healthy in time")
            time.sleep(0.1)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def metrics(self) -> dict[str, float]:
        """Every sample of ``/metrics``, summed over labels by name."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        totals: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.split("{", 1)[0].split(" ", 1)[0], float(line.rsplit(" ", 1)[1])
                totals[name] = totals.get(name, 0.0) + value
        return totals

    def resources(self) -> dict[str, int]:
        """RSS (KB), open file descriptors and threads of the server process (from /proc), and
        the tasks on its event loop (``lmparse_event_loop_tasks``; the scrape itself is one)."""
        status: dict[str, str] = {}
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                status[key] = value.strip()
        return {"rss_kb": int(status["VmRSS"].split()[0]), "fds": len(os.listdir(f"/proc/{self.pid}/fd")),
                "threads": int(status["Threads"]), "tasks": int(self.metrics().get("lmparse_event_loop_tasks", -1))}

    def log_text(self) -> str:
        fd = self._log.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def tracebacks(self) -> int:
        """How many tracebacks the server has logged (an unhandled error is a failure anywhere)."""
        return self.log_text().count("Traceback (most recent call last)")

    def stop(self, grace: float = 10.0) -> float | None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; how long it took to exit by itself
        (None: it had to be killed)."""
        took: float | None = 0.0
        if self.proc.poll() is None:
            start = time.monotonic()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=grace)
                took = time.monotonic() - start
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                took = None
        if not self._log.closed:
            self._log.close()
        return took

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def resources_text(before: dict[str, int], after: dict[str, int]) -> str:
    return (f"RSS {before['rss_kb'] / 1024:.1f} -> {after['rss_kb'] / 1024:.1f} MB, "
            f"fds {before['fds']} -> {after['fds']}, threads {before['threads']} -> {after['threads']}, "
            f"event-loop tasks {before['tasks']} -> {after['tasks']}")
