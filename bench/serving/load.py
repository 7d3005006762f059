"""Loopback load test: streamed tokens per second with many concurrent clients, ``lmparse
serve`` (the simulated Qwen3 at full speed, ``--token-rate 0``) next to a bare Starlette SSE
endpoint (``bare.py``) streaming lmparse's own events for the same request.

Both servers run at once, each in its own process pinned to CPU 0; the load generator
(``loadgen.py``: a protocol per connection, on uvloop when installed) runs in a third process
pinned to CPU 1.  For each client count the two are loaded in turn, ``pairs`` times, each run
once both servers are idle; a token is an SSE event (lmparse
writes one per streamed token, a step's events in one body; the bare endpoint the same events,
one body each).  Each run also reports the
CPU the server and the client spent, so a reader can see which one was the bottleneck.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from lmparse.serve import openai
from lmparse.serve.bindings import simulated_binding
from lmparse.serve.families import get_family
from lmparse.serve.runner import ChatRunner

from .stream import FAMILY

__all__ = ["request_body", "record_events", "measure", "servers"]

ROOT = Path(__file__).resolve().parents[2]
SERVER_CPU, CLIENT_CPU = 0, 1


def request_body(repeat: int) -> dict:
    """A streamed chat request the simulated model answers with reasoning, then an echo of
    the user's words ``repeat`` times over (about 12 tokens each)."""
    return {"model": FAMILY, "stream": True, "chat_template_kwargs": {"enable_thinking": True},
            "messages": [{"role": "user", "content": f"Tell me about streaming parsers and tokens. repeat={repeat}"}]}


def record_events(body: dict) -> bytes:
    """lmparse's SSE stream for ``body``, made in process (what the bare endpoint replays)."""
    binding = simulated_binding(get_family(FAMILY))
    gen_request, opts = openai.parse_request(body, FAMILY, "reasoning_content")

    async def collect() -> bytes:
        runner = ChatRunner(binding.engine.start(gen_request), binding.new_parser(gen_request.parser_request))
        return b"".join([chunk async for chunk in openai.stream_response(runner, opts)])

    return asyncio.run(collect())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pin(pid: int, cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > cpu:
        os.sched_setaffinity(pid, {cpu})


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_ready(port: int, path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).read()
            return
        except Exception as exc:
            if getattr(exc, "code", None) == 405:  # the bare endpoint answers POST only: it is up
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not start") from exc
            time.sleep(0.1)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@contextmanager
def servers(events: bytes, max_concurrency: int) -> Iterator[dict[str, tuple[int, int]]]:
    """``{"lmparse": (port, pid), "bare": (port, pid)}``, both running, pinned to one CPU."""
    tmp = Path(tempfile.mkdtemp(prefix="lmparse-bench-serving-"))
    (tmp / "events").write_bytes(events)
    ports = {"lmparse": _free_port(), "bare": _free_port()}
    commands = {
        "lmparse": [sys.executable, "-c", "import sys; from lmparse.cli import main; sys.exit(main())", "serve",
                    "--family", FAMILY, "--token-rate", "0", "--port", str(ports["lmparse"]), "--quiet",
                    "--log-level", "warning", "--max-concurrency", str(max_concurrency)],
        "bare": [sys.executable, "-m", "bench.serving.bare", str(ports["bare"]), str(tmp / "events")],
    }
    procs = {name: subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)  # the bare one logs every write after a client left
             for name, cmd in commands.items()}
    try:
        for name, proc in procs.items():
            _pin(proc.pid, SERVER_CPU)
            _wait_ready(ports[name], "/health" if name == "lmparse" else "/v1/chat/completions")
        yield {name: (ports[name], proc.pid) for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


def _settle(pids: Sequence[int], timeout: float = 60.0) -> None:
    """Wait until the servers are idle: a server may still be working for the clients of the
    run before (a stream the client left goes on until the server notices; the bare endpoint
    never does, uvicorn drops its writes), and both share one CPU."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        before = sum(map(_cpu_seconds, pids))
        time.sleep(0.25)
        if sum(map(_cpu_seconds, pids)) - before < 0.02:
            return


def _load(port: int, pid: int, clients: int, seconds: float, body_file: Path, pids: Sequence[int]) -> dict:
    _settle(pids)
    before = _cpu_seconds(pid)
    out = subprocess.run([sys.executable, "-m", "bench.serving.loadgen", str(port), "/v1/chat/completions",
                          str(clients), str(seconds), str(body_file), str(CLIENT_CPU)],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    result["server_cpu"] = _cpu_seconds(pid) - before
    result["tokens_per_s"] = result["events"] / result["seconds"]
    return result


def measure(clients: Sequence[int], seconds: float, pairs: int, repeat: int) -> dict:
    """Per client count: both servers' runs, their median tokens/s, and the median of the
    pairs' ratios (lmparse ÷ bare)."""
    body = request_body(repeat)
    events = record_events(body)
    results: dict = {"events_per_response": events.count(b"\n\n"), "runs": {}}
    with servers(events, max(clients) * 2) as running, tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(json.dumps(body).encode())
        f.flush()
        for n in clients:
            runs: dict[str, list[dict]] = {"lmparse": [], "bare": []}
            for _ in range(pairs):
                pids = [pid for _, pid in running.values()]
                for name, (port, pid) in running.items():
                    runs[name].append(_load(port, pid, n, seconds, Path(f.name), pids))
            ratios = [a["tokens_per_s"] / b["tokens_per_s"] for a, b in zip(runs["lmparse"], runs["bare"], strict=True)]
            results["runs"][n] = {
                "lmparse": statistics.median(r["tokens_per_s"] for r in runs["lmparse"]),
                "bare": statistics.median(r["tokens_per_s"] for r in runs["bare"]),
                "ratio": statistics.median(ratios),
                "detail": runs,
            }
    return results
