"""Section 2: clients that leave mid-stream or before a non-streaming answer, by the thousand:
every generation cancelled, nothing left in flight, no resource kept, the server still right."""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from .load import Case, fetch
from .rows import Checks, Row
from .server import Server, resources_text
from .wire import API_PATHS, body_for, request_bytes

__all__ = ["run"]

SIZES = {"full": 1000, "reduced": 20}
BATCH = 100  # clients connected at once
TOKEN_RATE = "50"  # tokens per second: a reply (~60 tokens) is still generating when its client leaves
_FAMILIES = ("qwen3", "gpt-oss")
_APIS = tuple(API_PATHS)


def _request(port: int, n: int, stream: bool) -> bytes:
    api = _APIS[n % 3]
    body = body_for(api, _FAMILIES[n % 2], f"Hello, this is disconnecting client {n}.", stream, tools=False)
    return request_bytes("POST", API_PATHS[api], port, json.dumps(body).encode(), close=False)


async def _leave_mid_stream(port: int, n: int, events: int = 3) -> bool:
    """Read ``events`` SSE events, then close; False if the stream ended or failed first."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(_request(port, n, stream=True))
        seen = b""
        while seen.count(b"\ndata:") < events:
            chunk = await asyncio.wait_for(reader.read(4096), 30)
            if not chunk:
                return False
            seen += chunk
        return b" 200 " in seen.split(b"\r\n", 1)[0]
    finally:
        writer.close()


async def _wait_metric(server: Server, name: str, target: float, timeout: float = 30.0) -> float:
    """Poll /metrics until ``name`` reaches ``target`` (or the time runs out); its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(server.metrics)
        if value.get(name, 0) == target or time.monotonic() > deadline:
            return value.get(name, 0)
        await asyncio.sleep(0.05)


async def _streaming(server: Server, count: int) -> int:
    """``count`` clients leaving after three events; how many saw their stream start."""
    ok = 0
    for start in range(0, count, BATCH):
        results = await asyncio.gather(*(_leave_mid_stream(server.port, n) for n in range(start,
                                                                                           min(count, start + BATCH))))
        ok += sum(results)
    return ok


async def _non_streaming(server: Server, count: int) -> int:
    """``count`` clients leaving while their answer is generated (the server has counted the
    request as started); how many were in flight when they left."""
    in_flight = 0
    for start in range(0, count, BATCH):
        ns = range(start, min(count, start + BATCH))
        started = (await asyncio.to_thread(server.metrics)).get("lmparse_requests_total", 0)
        conns = [await asyncio.open_connection("127.0.0.1", server.port) for _ in ns]
        for n, (_, writer) in zip(ns, conns, strict=True):
            writer.write(_request(server.port, n, stream=False))
        await _wait_metric(server, "lmparse_requests_total", started + len(ns), timeout=20)
        in_flight += int(await _wait_metric(server, "lmparse_requests_in_flight", len(ns), timeout=0))
        for reader, writer in conns:
            if reader.at_eof() or reader._buffer:  # type: ignore[attr-defined]  # an answer came back: not a leave
                in_flight -= 1
            writer.close()
    return in_flight


def _kind_row(server: Server, kind: str, count: int, started: int, before: dict[str, float],
              after: dict[str, float]) -> Row:
    cancelled = after.get("lmparse_engine_cancelled_total", 0) - before.get("lmparse_engine_cancelled_total", 0)
    engine = (after.get("lmparse_engine_streams_cancelled_total", 0)
              - before.get("lmparse_engine_streams_cancelled_total", 0))
    checks = Checks()
    checks.check(started == count, f"only {started} were generating when their client left")
    checks.check(cancelled == count, f"lmparse_engine_cancelled_total rose by {cancelled:g}, not {count}")
    checks.check(engine == count, f"the engines counted {engine:g} cancelled streams, not {count}")
    checks.check(after.get("lmparse_requests_in_flight", -1) == 0, "requests in flight did not return to 0")
    row = checks.row("disconnects", f"{count} {kind}", f"{count} cancellations counted, in flight back to 0",
                     f"{started} left while generating; cancelled_total +{cancelled:g}, engine streams cancelled "
                     f"+{engine:g}; in flight {after.get('lmparse_requests_in_flight', 0):g}", count)
    row.lost = count - int(min(cancelled, engine, started))
    return row


async def _answers(server: Server, cases: list[Case]) -> list[object]:
    async with httpx.AsyncClient(timeout=60) as client:
        return list(await asyncio.gather(*(fetch(client, server.url, c) for c in cases)))


async def _run(server: Server, count: int) -> list[Row]:
    probes = [Case(9000 + i, _FAMILIES[i % 2], api, i % 2 == 0, kind)
              for i, (api, kind) in enumerate(zip(_APIS, ("tool", "text", "two tools"), strict=True))]
    expected = await _answers(server, probes)
    await _streaming(server, 10)  # warm-up: worker threads, caches and pools exist before "before"
    await _non_streaming(server, 10)
    await _wait_metric(server, "lmparse_requests_in_flight", 0)
    resources, rows = server.resources(), []
    for kind, leave in (("streaming clients leave after 3 events", _streaming),
                        ("non-streaming clients leave before the answer", _non_streaming)):
        before = await asyncio.to_thread(server.metrics)
        started = await leave(server, count)
        await _wait_metric(server, "lmparse_requests_in_flight", 0)
        await asyncio.sleep(0.3)  # counters settle after the last close
        rows.append(_kind_row(server, kind, count, started, before, await asyncio.to_thread(server.metrics)))
    after = server.resources()
    again = await _answers(server, probes)
    checks = Checks()
    checks.check(after["fds"] <= resources["fds"] + 2, "open fds grew")
    checks.check(after["threads"] <= resources["threads"] + 2, "threads grew")
    checks.check(0 <= after["tasks"] <= resources["tasks"] + 2, "event-loop tasks grew")
    checks.check(after["rss_kb"] - resources["rss_kb"] < 32 * 1024, "RSS grew by 32 MB or more")
    wrong = sum(1 for c, a, e in zip(probes, again, expected, strict=True)
                if a != e or isinstance(a, str) or not c.plausible(a))
    checks.check(not wrong, f"{wrong} answers afterwards differ: {again}")
    checks.check(server.tracebacks() == 0, f"{server.tracebacks()} tracebacks in the server log")
    rows.append(checks.row("disconnects", f"server after {2 * count} disconnects",
                           "fds, threads and tasks back, RSS within 32 MB, the same answers as before (3 APIs)",
                           resources_text(resources, after), len(probes), wrong))
    return rows


def run(size: str) -> list[Row]:
    with Server(["--token-rate", TOKEN_RATE, *(a for f in _FAMILIES for a in ("--family", f))]) as server:
        return asyncio.run(_run(server, SIZES[size]))
