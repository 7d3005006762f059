"""Section 3: hostile requests, one row each: the status and error shape of the path's API,
and the server healthy afterwards (``/health`` and a normal request answered right)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import sockets
from .rows import Checks, Row
from .server import Server
from .wire import API_PATHS, RawResponse, body_for

__all__ = ["run", "Probe", "error_shape"]

from .sockets import _KEY as KEY
MB = 1024 * 1024
MESSAGES = {"full": 100_000, "reduced": 20_000}  # the valid request with very many messages
OPENAI, ANTHROPIC, RESPONSES = (API_PATHS[a] for a in ("openai", "anthropic", "responses"))


@dataclass
class Probe:
    """One hostile HTTP request; ``expect``: statuses that pass; ``names``: the field a 400 must name."""

    case: str
    path: str
    content: bytes | None = None
    expect: tuple[int, ...] = (400,)
    names: str | None = None
    method: str = "POST"
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json",
                                                             "authorization": f"Bearer {KEY}"})
    bound: float = 30.0  # seconds the answer may take


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def error_shape(anthropic: bool, body: Any) -> str | None:
    """What is wrong with an error body for its API (None: the right shape)."""
    if anthropic:
        ok = (isinstance(body, dict) and body.get("type") == "error" and isinstance(body.get("error"), dict)
              and {"type", "message"} <= set(body["error"]) and isinstance(body["error"]["message"], str))
        return None if ok else f"not Anthropic's error shape: {str(body)[:120]}"
    ok = (isinstance(body, dict) and isinstance(body.get("error"), dict)
          and set(body["error"]) == {"message", "type", "param", "code"} and isinstance(body["error"]["message"], str))
    return None if ok else f"not OpenAI's error shape: {str(body)[:120]}"


def names_field(anthropic: bool, body: dict, name: str) -> bool:
    if anthropic:
        return name in body["error"]["message"]
    param = body["error"]["param"] or ""
    return param == name or param.startswith(name + ".") or param.startswith(name + "[")


# ---- the table ---------------------------------------------------------------------------


def _valid(api: str) -> dict:
    """A valid request of ``api`` setting most of its fields (each gets a wrong type in turn)."""
    body = body_for(api, "qwen3", "Call get_weather with city=Paris", stream=False)
    common = {"temperature": 0.7, "top_p": 0.9}
    if api == "openai":
        return {**body, **common, "max_tokens": 256, "n": 1, "stop": ["\n\nEND"], "presence_penalty": 0.0,
                "frequency_penalty": 0.0, "seed": 1, "logprobs": False, "user": "u1", "tool_choice": "auto",
                "parallel_tool_calls": True, "response_format": {"type": "text"}, "reasoning_effort": "low"}
    if api == "anthropic":
        return {**body, **common, "system": "Be brief.", "top_k": 40, "stop_sequences": ["\n\nEND"],
                "tool_choice": {"type": "auto"}, "metadata": {"user_id": "u1"}}
    return {**body, **common, "instructions": "Be brief.", "max_output_tokens": 256, "tool_choice": "auto",
            "parallel_tool_calls": True, "store": False, "metadata": {"k": "v"}, "text": {"format": {"type": "text"}},
            "reasoning": {"effort": "low"}, "truncation": "disabled", "user": "u1"}


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "hot"
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return {"not": "a list"}
    return "not an object"


def _nested(api: str) -> Iterator[tuple[str, list[str | int]]]:
    """Fields one level down that get a wrong type too: (name as the API writes it, path)."""
    if api == "responses":
        return
    yield "messages[0].role", ["messages", 0, "role"]
    yield "messages[0].content", ["messages", 0, "content"]
    if api == "openai":
        yield "tools[0].function", ["tools", 0, "function"]
        yield "tools[0].function.name", ["tools", 0, "function", "name"]
    else:
        yield "tools[0].name", ["tools", 0, "name"]
        yield "tools[0].input_schema", ["tools", 0, "input_schema"]


def wrong_types() -> Iterator[Probe]:
    for api, path in API_PATHS.items():
        valid = _valid(api)
        yield Probe(f"{api}: the valid request itself", path, _json(valid), (200,))
        for name, value in valid.items():
            yield Probe(f"{api}: {name} = {json.dumps(_wrong(value))}", path, _json({**valid, name: _wrong(value)}),
                        names=name)
        for name, keys in _nested(api):
            body = json.loads(json.dumps(valid))
            holder = body
            for key in keys[:-1]:
                holder = holder[key]
            holder[keys[-1]] = _wrong(holder[keys[-1]])
            yield Probe(f"{api}: {name} = {json.dumps(holder[keys[-1]])}", path, _json(body), names=name)


def _chat(**fields: Any) -> bytes:
    return _json({**body_for("openai", "qwen3", "hello", stream=False), **fields})


def _messages(**fields: Any) -> bytes:
    return _json({**body_for("anthropic", "qwen3", "hello", stream=False), **fields})


def _responses(**fields: Any) -> bytes:
    return _json({**body_for("responses", "qwen3", "hello", stream=False), **fields})


def bodies(size: str) -> Iterator[Probe]:
    """Bodies that are not JSON objects, too deep, too big, or not UTF-8."""
    for path in (OPENAI, ANTHROPIC):
        yield Probe(f"malformed JSON on {path}", path, b'{"model": "qwen3", "messages": [')
        for text in (b"[]", b'"a string"', b"null", b"42"):
            yield Probe(f"non-object JSON {text.decode()} on {path}", path, text)
    yield Probe("depth 100 000: [[[...]]]", OPENAI, b"[" * 100_000 + b"]" * 100_000)
    yield Probe("depth 100 000 inside metadata", ANTHROPIC,
                _messages()[:-1] + b', "metadata": ' + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"}")
    yield Probe("invalid UTF-8 in a string", OPENAI, _chat().replace(b'"hello"', b'"he\xff\xfello"'))
    yield Probe("overlong UTF-8 (C0 AF) in a string", ANTHROPIC, _messages().replace(b'"hello"', b'"\xc0\xaf"'))
    yield Probe("lone surrogate escape \\ud800", OPENAI, _chat().replace(b'"hello"', b'"he\\ud800llo"'), (200, 400))
    yield Probe("escaped NUL \\u0000 in content", OPENAI, _chat().replace(b'"hello"', b'"he\\u0000llo"'), (200,))
    yield Probe("raw NUL byte in a string", ANTHROPIC, _messages().replace(b'"hello"', b'"he\x00llo"'))
    # One served family answers to any model name (docs/models-errors-logs.md): 200 is right too.
    yield Probe("NUL in the model name", ANTHROPIC, _messages(model="qwen3\u0000"), (200, 404))
    yield Probe("10 MB body (Content-Length)", OPENAI, _chat(user="x" * (10 * MB)), (413,))
    yield Probe("10 MB body (chunked, no length)", ANTHROPIC, b"chunked:" + _messages(system="x" * (10 * MB)), (413,))
    count = MESSAGES[size]
    turns = [{"role": ("user", "assistant")[i % 2], "content": f"turn {i}"} for i in range(count - 1)]
    content = _chat(messages=turns + [{"role": "user", "content": "hi"}])
    yield Probe(f"{count:,} messages (valid, {len(content) / MB:.1f} MB)".replace(",", " "), OPENAI, content,
                (200, 400, 413), bound=60.0)
    yield Probe("integer beyond 64 bits (max_tokens 10**30)", OPENAI, _chat(max_tokens=10**30), names=None)
    yield Probe("NaN is not JSON (temperature NaN)", OPENAI,
                _chat().replace(b'"stream"', b'"temperature": NaN, "stream"'))


def semantics() -> Iterator[Probe]:
    """Roles, tools, tool_choice, n and limits that a valid JSON request can get wrong."""
    yield Probe("role 'wizard'", OPENAI, _chat(messages=[{"role": "wizard", "content": "hi"}]),
                names="messages[0].role")
    yield Probe("role missing", OPENAI, _chat(messages=[{"content": "hi"}]), names="messages[0].role")
    yield Probe("messages empty", OPENAI, _chat(messages=[]), names="messages")
    # lmparse reads a 'system' turn in messages as the system prompt (Anthropic's API refuses it).
    yield Probe("Anthropic role 'system' in messages", ANTHROPIC,
                _messages(messages=[{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]),
                (200, 400), names="messages[0].role")
    yield Probe("Anthropic role 'tool'", ANTHROPIC, _messages(messages=[{"role": "tool", "content": "x"}]),
                names="messages[0].role")
    yield Probe("Responses input role 'wizard'", RESPONSES, _responses(input=[{"role": "wizard", "content": "x"}]),
                names="input[0]")
    yield Probe("tool without function", OPENAI, _chat(tools=[{"type": "function"}]), names="tools[0]")
    yield Probe("tool function without name", OPENAI,
                _chat(tools=[{"type": "function", "function": {"parameters": {}}}]), names="tools[0].function")
    yield Probe("tool parameters a string", OPENAI, _chat(tools=[{"type": "function", "function": {
        "name": "f", "parameters": "object"}}]), names="tools[0].function.parameters")
    yield Probe("Anthropic tool without name", ANTHROPIC, _messages(tools=[{"input_schema": {"type": "object"}}]),
                names="tools[0]")
    yield Probe("Responses function tool without name", RESPONSES, _responses(tools=[{"type": "function"}]),
                names="tools[0]")
    yield Probe("tool_choice names a tool not offered", OPENAI, _chat(tool_choice={"type": "function",
                                                                                  "function": {"name": "nope"}}),
                names="tool_choice")
    yield Probe("tool_choice 'sometimes'", OPENAI, _chat(tool_choice="sometimes"), names="tool_choice")
    yield Probe("Anthropic tool_choice names a tool not offered", ANTHROPIC,
                _messages(tool_choice={"type": "tool", "name": "nope"}), names="tool_choice")
    yield Probe("Anthropic tool_choice type 'bogus'", ANTHROPIC, _messages(tool_choice={"type": "bogus"}),
                names="tool_choice")
    yield Probe("Responses tool_choice names a tool not offered", RESPONSES,
                _responses(tool_choice={"type": "function", "name": "nope"}), names="tool_choice")
    for n in (2, 0, -1):
        yield Probe(f"n = {n}", OPENAI, _chat(n=n), names="n")
    for path, build, name in ((OPENAI, _chat, "max_tokens"), (ANTHROPIC, _messages, "max_tokens"),
                              (RESPONSES, _responses, "max_output_tokens"), (OPENAI, _chat, "max_completion_tokens")):
        for value in (10**12, -1, 0):
            yield Probe(f"{name} = {value} on {path}", path, build(**{name: value}), names=name)
    yield Probe("max_tokens = true (a bool is no integer)", OPENAI, _chat(max_tokens=True), names="max_tokens")
    yield Probe("temperature = -1", OPENAI, _chat(temperature=-1), names="temperature")
    yield Probe("temperature = 1e6", ANTHROPIC, _messages(temperature=1e6), names="temperature")


def http_level() -> Iterator[Probe]:
    """Content types, methods, paths and keys."""
    auth = {"authorization": f"Bearer {KEY}"}
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        yield Probe(f"Content-Type {media}", OPENAI, _chat(), (415,), headers={**auth, "content-type": media})
    yield Probe("no Content-Type", ANTHROPIC, _messages(), (415,), headers=auth)
    yield Probe("Content-Type application/json; charset=utf-8", OPENAI, _chat(), (200,),
                headers={**auth, "content-type": "application/json; charset=utf-8"})
    for method, path in (("GET", OPENAI), ("PUT", ANTHROPIC), ("PATCH", RESPONSES), ("DELETE", "/health"),
                         ("POST", "/v1/models")):
        yield Probe(f"{method} {path}", path, b"" if method != "POST" else _chat(), (405,), method=method)
    for path in ("/v1/chat/completion", "/v2/chat/completions", "/v1/messages/nope", "/%2e%2e/%2e%2e/etc/passwd",
                 "/v1/" + "a" * 8000, "/v1/chat/completions%00"):
        yield Probe(f"path {path[:40]}{'...' if len(path) > 40 else ''}", path, _chat(), (404,))
    yield Probe("missing key (OpenAI)", OPENAI, _chat(), (401,), headers={"content-type": "application/json"})
    yield Probe("missing key (Anthropic)", ANTHROPIC, _messages(), (401,), headers={"content-type": "application/json"})
    wrong = {"content-type": "application/json"}
    for case, path, extra in (
            ("wrong key in Authorization: Bearer", OPENAI, {"authorization": "Bearer not-the-key"}),
            ("wrong key in x-api-key", ANTHROPIC, {"x-api-key": "not-the-key"}),
            ("key without 'Bearer '", OPENAI, {"authorization": KEY}),
            ("key as Basic credentials", OPENAI, {"authorization": f"Basic {KEY}"}),
            ("key in api-key (Azure's header)", OPENAI, {"api-key": KEY}),
            ("key in x-goog-api-key", ANTHROPIC, {"x-goog-api-key": KEY}),
            ("key in the query (?api_key=)", OPENAI + f"?api_key={KEY}", {}),
            ("key in the query (?key=)", ANTHROPIC + f"?key={KEY}", {}),
            ("Bearer with no key", OPENAI, {"authorization": "Bearer"})):
        yield Probe(case, path, _chat() if path.startswith(OPENAI) else _messages(), (401,), headers={**wrong, **extra})
    yield Probe("right key in Authorization: Bearer", ANTHROPIC, _messages(), (200,))
    yield Probe("right key in x-api-key", OPENAI, _chat(), (200,), headers={**wrong, "x-api-key": KEY})


def probes(size: str) -> list[Probe]:
    return [*bodies(size), *wrong_types(), *semantics(), *http_level()]


# ---- running them ------------------------------------------------------------------------


async def _send(client: httpx.AsyncClient, url: str, probe: Probe) -> RawResponse:
    content: Any = probe.content
    if content is not None and content.startswith(b"chunked:"):
        data = content[len(b"chunked:"):]

        async def pieces() -> Any:
            for at in range(0, len(data), 64 * 1024):
                yield data[at:at + 64 * 1024]

        content = pieces()
    r = await client.request(probe.method, url + probe.path, content=content, headers=probe.headers,
                             timeout=probe.bound)
    return RawResponse(r.status_code, dict(r.headers), r.content)


def check_answer(checks: Checks, anthropic: bool, response: RawResponse, expect: tuple[int, ...],
                 name: str | None) -> str:
    """The status and body checks every probe shares; the observed text."""
    checks.check(response.status in expect, f"status {response.status}")
    try:
        body = response.json()
    except ValueError:
        checks.check(False, f"body is not JSON: {response.body[:80]!r}")
        return f"{response.status}, not JSON"
    if response.status >= 400:
        problem = error_shape(anthropic, body)
        checks.check(problem is None, problem or "")
        if problem is None and name is not None and response.status == 400:
            checks.check(names_field(anthropic, body, name), f"error does not name {name}")
        message = body["error"].get("message", "") if problem is None else ""
        param = body["error"].get("param") if problem is None and not anthropic else None
        return f"{response.status} {'param ' + repr(param) + ': ' if param else ''}{str(message)[:120]}"
    return f"{response.status}"


async def healthy(client: httpx.AsyncClient, server: Server, n: int) -> str | None:
    """None if /health and a normal request answer right; else what went wrong."""
    try:
        health = await client.get(server.url + "/health", timeout=10)
        if health.status_code != 200 or health.json().get("status") != "ok":
            return f"/health answered {health.status_code}"
        r = await client.post(server.url + OPENAI, json=body_for("openai", "qwen3", f"probe {n} after", False),
                              headers={"authorization": f"Bearer {KEY}"}, timeout=30)
        if r.status_code != 200 or f"probe {n} after" not in (r.json()["choices"][0]["message"]["content"] or ""):
            return f"a normal request answered {r.status_code}: {r.text[:100]}"
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        return f"not healthy: {type(exc).__name__}: {exc}"
    if server.proc.poll() is not None:
        return "the server exited"
    return None


def _expected(probe: Probe) -> str:
    shape = "Anthropic" if probe.path.startswith("/v1/messages") else "OpenAI"
    statuses = " or ".join(map(str, probe.expect))
    named = f" naming {probe.names}" if probe.names and 400 in probe.expect else ""
    return f"{statuses}{'' if probe.expect == (200,) else ' ' + shape + ' shape'}{named}"


async def _probe_row(client: httpx.AsyncClient, server: Server, n: int, probe: Probe) -> Row:
    checks = Checks()
    start = time.monotonic()
    try:
        response = await _send(client, server.url, probe)
        observed = check_answer(checks, probe.path.startswith("/v1/messages"), response, probe.expect, probe.names)
    except httpx.HTTPError as exc:
        checks.check(False, f"no answer: {type(exc).__name__}")
        observed = "no answer"
    took = time.monotonic() - start
    if probe.bound != Probe.bound:
        observed += f" in {took:.1f} s"
        checks.check(took < probe.bound, f"took {took:.1f} s, over {probe.bound:g} s")
    problem = await healthy(client, server, n)
    checks.check(problem is None, problem or "")
    return checks.row("hostile", probe.case, _expected(probe) + "; healthy after", observed + "; healthy after"
                      if problem is None else observed)


def server_args(key_file: str) -> list[str]:
    return ["--family", "qwen3", "--token-rate", "0", "--api-key-file", key_file,
            "--timeout-headers", str(sockets.TIMEOUT), "--timeout-keep-alive", str(sockets.TIMEOUT)]


async def _run(server: Server, size: str) -> list[Row]:
    rows = []
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=4)) as client:
        # The socket rows mostly wait (for a timeout to close a connection): all at once, while
        # the probes run (the server must answer them with slow and silent sockets open).
        waiting = asyncio.gather(*(make(server, size) for make in sockets.SOCKET_ROWS))
        for n, probe in enumerate(probes(size)):
            rows.append(await _probe_row(client, server, n, probe))
        for row in await waiting:
            problem = await healthy(client, server, len(rows))
            if problem is not None:
                row.ok, row.observed = False, f"{row.observed}; FAILED: {problem}"
            rows.append(row)
    if server.tracebacks():
        rows.append(Row("hostile", "server log", "no traceback", f"{server.tracebacks()} tracebacks", False))
    return rows


def run(size: str) -> list[Row]:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".key") as fh:
        fh.write(KEY + "\n")
        fh.flush()
        with Server(server_args(fh.name)) as server:
            return asyncio.run(_run(server, size))
