"""Section 4: `lmparse serve --engine vllm` in front of a scripted engine that stalls, resets,
sends garbage, refuses or fails mid-stream, or streams faster than a slow client reads."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import httpx

from .fake_engine import ANSWER, SECRET, FakeEngine
from .hostile import error_shape
from .rows import Checks, Row
from .server import Server
from .wire import API_PATHS, answer_of, body_for, request_bytes, sse_events, stream_answer

__all__ = ["run"]

BEFORE = ("reset-before", "garbage-before", "http-400-before", "http-500-before")
MID = ("reset-mid", "garbage-mid", "error-event-500", "error-event-400")
CLIENT_WAIT = {"full": 5.0, "reduced": 1.0}  # how long a client waits on a stalled stream before leaving
SLOW_READ = {"full": 8, "reduced": 2}  # events read, one per second, by the slow client
SHUTDOWN_GRACE = {"full": 10.0, "reduced": 3.0}  # seconds from SIGTERM to exit
CLOSE_WITHIN = 2.0  # seconds from a client leaving to lmparse closing its upstream connection


class Variant(NamedTuple):
    api: str
    stream: bool

    @property
    def label(self) -> str:
        return f"{self.api} {'streaming' if self.stream else 'non-streaming'}"


VARIANTS = [Variant("openai", True), Variant("anthropic", True), Variant("responses", True), Variant("openai", False)]


def _body(variant: Variant, fault: str, **extra: object) -> dict:
    return {**body_for(variant.api, "qwen3", f"Answer the question FAULT:{fault}", variant.stream, tools=False),
            **extra}


async def _post(client: httpx.AsyncClient, url: str, variant: Variant, fault: str,
                bound: float = 20.0) -> tuple[int, dict[str, str], str]:
    async def go() -> tuple[int, dict[str, str], str]:
        async with client.stream("POST", url + API_PATHS[variant.api], json=_body(variant, fault)) as r:
            return r.status_code, dict(r.headers), (await r.aread()).decode(errors="replace")
    return await asyncio.wait_for(go(), bound)


def _leak_checks(checks: Checks, text: str, fake: FakeEngine) -> None:
    checks.check(SECRET not in text, "the upstream's own error text reaches the client")
    checks.check(f"127.0.0.1:{fake.port}" not in text, "the upstream URL reaches the client")


async def _control(client: httpx.AsyncClient, server: Server, variant: Variant) -> Row:
    checks = Checks()
    status, _, text = await _post(client, server.url, variant, "ok")
    answer = stream_answer(variant.api, text) if variant.stream else answer_of(variant.api, json.loads(
        text))
    right = checks.check(status == 200 and answer.complete and ANSWER in answer.content
                         and "</think>" not in answer.content, f"not the reply: {status} {answer.short()}")
    return checks.row("upstream", f"no fault, {variant.label}", "200, the reply (reasoning and content)",
                      f"{status}, {answer.short()}", lost=0 if right else 1)


async def _before(client: httpx.AsyncClient, server: Server, fake: FakeEngine, variant: Variant, fault: str) -> Row:
    checks = Checks()
    try:
        status, headers, text = await _post(client, server.url, variant, fault)
    except (httpx.HTTPError, asyncio.TimeoutError) as exc:
        return Row("upstream", f"{fault} before the stream, {variant.label}", "502/504", f"no answer: {exc!r}", False,
                   lost=1)
    refused = fault == "http-400-before"  # the engine says the request is wrong: the client hears why
    checks.check(status == 400 if refused else status in (502, 503, 504), f"status {status}")
    try:
        problem = error_shape(variant.api == "anthropic", json.loads(text))
    except ValueError:
        problem = "not JSON"
    checks.check(problem is None, problem or "")
    if refused:
        checks.check(SECRET in text, "the engine's reason is not in the 400")
        checks.check(f"127.0.0.1:{fake.port}" not in text, "the upstream URL reaches the client")
    else:
        _leak_checks(checks, text, fake)
    checks.check("x-request-id" in headers, "no x-request-id header")
    expected = ("400 in the API's error shape with the engine's reason, no upstream URL, x-request-id" if refused
                else "502/504 in the API's error shape, no upstream URL or error text, x-request-id")
    return checks.row("upstream", f"{fault} before the stream, {variant.label}", expected, f"{status} {text[:150]}")


def _error_event(variant: Variant, text: str) -> bool:
    events = sse_events(text)
    if variant.api == "openai":
        return any(isinstance(d, dict) and "error" in d for _, d in events) and events[-1][1] == "[DONE]"
    if variant.api == "anthropic":
        return any(name == "error" for name, _ in events)
    return any(name == "error" for name, _ in events) and events[-1][0] == "response.failed"


async def _mid(client: httpx.AsyncClient, server: Server, fake: FakeEngine, variant: Variant, fault: str) -> Row:
    checks = Checks()
    case = f"{fault} mid-stream, {variant.label}"
    try:
        status, _, text = await _post(client, server.url, variant, fault)
    except (httpx.HTTPError, asyncio.TimeoutError) as exc:
        return Row("upstream", case, "the API's error event, the stream ended", f"no end: {exc!r}", False, lost=1)
    if variant.stream:
        checks.check(status == 200 and _error_event(variant, text), "no error event ending the stream")
        expected, observed = "the API's error event ends the stream; no upstream detail", f"{status}, ...{text[-160:]}"
    else:
        checks.check(status in (502, 503, 504), f"status {status}")
        expected, observed = "502 in the API's error shape; no upstream detail", f"{status} {text[:150]}"
    _leak_checks(checks, text, fake)
    return checks.row("upstream", case, expected, observed)


async def _stalled(server: Server, fake: FakeEngine, fault: str, size: str) -> Row:
    """A client waits ``CLIENT_WAIT`` on a stall, then leaves: lmparse must close upstream."""
    checks = Checks()
    wait = CLIENT_WAIT[size]
    got = b""
    async with httpx.AsyncClient(timeout=httpx.Timeout(wait + 30)) as client:
        async def read() -> None:
            nonlocal got
            async with client.stream("POST", server.url + API_PATHS["openai"],
                                     json=_body(Variant("openai", True), fault)) as r:
                async for data in r.aiter_bytes():
                    got += data
        try:
            await asyncio.wait_for(read(), wait)
        except asyncio.TimeoutError:
            pass
    left = time.monotonic()
    deadline = left + CLOSE_WITHIN + 1
    while fake.ended.get(fault, 0) < left and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    ended = fake.ended.get(fault, 0)
    closed = ended - left if ended >= left else None
    checks.check(closed is not None and closed <= CLOSE_WITHIN, "lmparse kept the upstream connection open")
    events = got.count(b"data:")
    observed = (f"client left after {wait:g} s with {events} events; upstream closed "
                + (f"{closed:.2f} s later" if closed is not None else f"not within {CLOSE_WITHIN + 1:g} s"))
    where = "before the first byte" if fault == "stall-before" else "after 3 events"
    return checks.row("upstream", f"stall {where}, then the client leaves",
                      f"the upstream connection closed within {CLOSE_WITHIN:g} s of the client leaving", observed)


async def _slow_reader(server: Server, fake: FakeEngine, size: str) -> Row:
    """One event per second read from an engine that streams as fast as it can."""
    checks = Checks()
    events = SLOW_READ[size]
    body = json.dumps(_body(Variant("openai", True), "endless", max_tokens=120_000)).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port, limit=4096)
    before = server.resources()
    try:
        writer.write(request_bytes("POST", API_PATHS["openai"], server.port, body, close=False))
        await reader.readuntil(b"\r\n\r\n")
        sent_first = None
        for i in range(events):
            await asyncio.wait_for(reader.readuntil(b"\n\n"), 10)
            await asyncio.sleep(1)
            if i == 0:
                sent_first = fake.sent.get("endless", 0)
        sent, after = fake.sent.get("endless", 0), server.resources()
    finally:
        writer.close()
    growth = (after["rss_kb"] - before["rss_kb"]) / 1024
    checks.check(growth < 64, f"server RSS grew {growth:.0f} MB")
    checks.check(sent < 32 * 2**20, "the engine's bytes were all taken in (no backpressure)")
    return checks.row("upstream", f"slow reader: {events} events, one per second, from an endless fast engine",
                      "server memory bounded (RSS +< 64 MB; the engine blocked by backpressure)",
                      f"engine sent {(sent_first or 0) / 2**20:.1f} MB after 1 s, {sent / 2**20:.1f} MB after "
                      f"{events} s; server RSS {growth:+.1f} MB")


async def _run(size: str) -> list[Row]:
    fake = FakeEngine()
    await fake.start()
    rows = []
    # A real engine's prompts need the model's chat template; the scripted engine has no model: ChatML.
    template = Path(tempfile.gettempdir()) / "lmparse-reliability-chatml.jinja"  # one file, rewritten each run
    template.write_text("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content or '' }}<|im_end|>\n"
                        "{% endfor %}<|im_start|>assistant\n", encoding="utf-8")
    with Server(["--family", "qwen3", "--engine", "vllm", "--upstream", fake.url, "--shutdown-grace", "1",
                 "--chat-template", str(template)]) as server:
        async with httpx.AsyncClient(timeout=30) as client:
            for variant in VARIANTS:
                rows.append(await _control(client, server, variant))
                rows += [await _before(client, server, fake, variant, f) for f in BEFORE]
                rows += [await _mid(client, server, fake, variant, f) for f in MID]
        rows += await asyncio.gather(_stalled(server, fake, "stall-before", size),  # mostly waiting: at once
                                     _stalled(server, fake, "stall-mid", size), _slow_reader(server, fake, size))
        await asyncio.sleep(0.5)
        metrics = await asyncio.to_thread(server.metrics)
        checks = Checks()
        checks.check(metrics.get("lmparse_requests_in_flight", -1) == 0, "requests in flight did not return to 0")
        open_now = fake.open
        checks.check(open_now == 0, f"{open_now} upstream connections still open")
        checks.check(server.tracebacks() == 0, f"{server.tracebacks()} tracebacks in the server log")
        rows.append(checks.row("upstream", "server after the faults", "in flight 0, no upstream connection open, "
                               "no traceback", f"in flight {metrics.get('lmparse_requests_in_flight', 0):g}, "
                               f"upstream connections open {open_now}", requests=0))
        took = server.stop(grace=SHUTDOWN_GRACE[size])
    checks = Checks()
    checks.check(took is not None, "had to be killed")
    rows.append(checks.row("upstream", "SIGTERM with a stalled upstream request in flight",
                           f"exits by itself within {SHUTDOWN_GRACE[size]:g} s",
                           f"exited after {took:.1f} s" if took is not None else
                           f"still running after {SHUTDOWN_GRACE[size]:g} s: killed", requests=0))
    await fake.stop()
    return rows


def run(size: str) -> list[Row]:
    return asyncio.run(_run(size))
