"""Section 1: many concurrent mixed requests, each answer equal to the same request's answer alone."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import NamedTuple

import httpx

from .rows import Checks, Row
from .server import Server, resources_text
from .wire import API_PATHS, Answer, answer_of, body_for, stream_answer

__all__ = ["run", "FAMILIES", "Case", "cases", "fetch"]

FAMILIES = ("qwen3", "glm47", "gpt-oss", "kimi-k2")
APIS = ("openai", "anthropic", "responses")
KINDS = ("text", "tool", "two tools")
SIZES = {"full": 200, "reduced": 24}


class Case(NamedTuple):
    number: int
    family: str
    api: str
    stream: bool
    kind: str

    def text(self) -> str:
        n = self.number
        if self.kind == "tool":
            return f"Call get_weather with city=City{n} note=request-{n}"
        if self.kind == "two tools":
            return f"Call get_weather with city=City{n} and then get_time with timezone=Zone/{n}"
        return f"Hello, this is request number {n}; tell me something."

    def body(self) -> dict:
        return body_for(self.api, self.family, self.text(), self.stream)

    def plausible(self, answer: Answer) -> bool:
        """The answer is this request's (its unique number shows), not merely some answer."""
        mark = f"City{self.number}" if self.kind != "text" else f"number {self.number};"
        calls = "".join(a for _, a in answer.calls)
        expected_calls = {"text": 0, "tool": 1, "two tools": 2}[self.kind]
        return answer.complete and len(answer.calls) == expected_calls and mark in (answer.content + calls)


def cases(count: int) -> list[Case]:
    """Every family, API, streaming mode and kind, cycled: count distinct requests."""
    out = []
    for n in range(count):
        family = FAMILIES[n % 4]
        api = APIS[(n // 4) % 3]
        stream = (n // 12) % 2 == 1
        out.append(Case(n, family, api, stream, KINDS[n % 3]))
    return out


async def fetch(client: httpx.AsyncClient, url: str, case: Case) -> Answer | str:
    """The request's answer, or the reason there is none."""
    try:
        if case.stream:
            async with client.stream("POST", url + API_PATHS[case.api], json=case.body()) as r:
                text = (await r.aread()).decode()
                if r.status_code != 200:
                    return f"HTTP {r.status_code}"
                return stream_answer(case.api, text)
        r = await client.post(url + API_PATHS[case.api], json=case.body())
        if r.status_code != 200:
            return f"HTTP {r.status_code}"
        return answer_of(case.api, r.json())
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        return f"{type(exc).__name__}: {exc}"


async def _run(server: Server, count: int) -> list[Row]:
    todo = cases(count)
    limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=count + 10)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        solo = {}
        for case in todo:  # one at a time: each request's own answer
            solo[case] = await fetch(client, server.url, case)
        before = server.resources()
        together = await asyncio.gather(*(fetch(client, server.url, case) for case in todo))
    await asyncio.sleep(0.5)
    after, metrics = server.resources(), server.metrics()
    groups: dict[tuple[str, bool], list[tuple[Case, Answer | str]]] = defaultdict(list)
    for case, answer in zip(todo, together, strict=True):
        groups[case.api, case.stream].append((case, answer))
    rows = []
    for (api, stream), got in sorted(groups.items()):
        wrong = [f"#{c.number} {c.family} {c.kind}: {a if isinstance(a, str) else a.short()}" for c, a in got
                 if isinstance(a, str) or a != solo[c] or not c.plausible(a)]
        families = sorted({c.family for c, _ in got})
        kinds = [k for k in KINDS if any(c.kind == k for c, _ in got)]
        rows.append(Row("load", f"{api} {'streaming' if stream else 'non-streaming'} ({len(got)} of {count} at once)",
                        "each answer equals the same request alone (content, reasoning, calls, finish)",
                        f"{len(got) - len(wrong)} equal over {', '.join(families)} x {', '.join(kinds)}"
                        + (f"; differ/lost: {'; '.join(wrong[:3])}" if wrong else ""),
                        not wrong, len(got), len(wrong)))
    checks = Checks()
    checks.check(metrics.get("lmparse_requests_in_flight", -1) == 0, "requests in flight did not return to 0")
    checks.check(after["fds"] <= before["fds"] + 2, "open fds grew")
    checks.check(server.tracebacks() == 0, f"{server.tracebacks()} tracebacks in the server log")
    rows.append(checks.row("load", f"server after {count} concurrent requests",
                           "in flight 0, fds back, no traceback in the log",
                           f"{resources_text(before, after)}; in flight {metrics.get('lmparse_requests_in_flight')}",
                           requests=0))
    return rows


def run(size: str) -> list[Row]:
    with Server(["--token-rate", "0", *(a for f in FAMILIES for a in ("--family", f))]) as server:
        return asyncio.run(_run(server, SIZES[size]))
