"""Hostile rows that need a raw socket: huge and many headers, pipelining, slow headers,
silent and idle connections (when does the server close them)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

from .rows import Checks, Row
from .server import Server
from .wire import API_PATHS, RawResponse, body_for, read_response, request_bytes

__all__ = ["SOCKET_ROWS", "TIMEOUT"]

TIMEOUT = 2  # seconds given to --timeout-headers and --timeout-keep-alive when this build has them
WINDOW = {"full": TIMEOUT + 6, "reduced": TIMEOUT + 2}  # how long a connection is watched for its close
_KEY = "reliability-run-key-7f3a"  # hostile.KEY (imported there from here would be circular)


def _chat(port: int, text: str, close: bool = True, extra: dict[str, str] | None = None) -> bytes:
    body = json.dumps(body_for("openai", "qwen3", text, stream=False)).encode()
    headers = {"Authorization": f"Bearer {_KEY}", **(extra or {})}
    return request_bytes("POST", API_PATHS["openai"], port, body, headers, close=close)


def _says(response: RawResponse | None, text: str) -> bool:
    try:
        return response is not None and text in response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, TypeError):
        return False


async def _closed_after(reader: asyncio.StreamReader, window: float) -> float | None:
    """Seconds until the server closes the connection (None: still open after ``window``)."""
    start = time.monotonic()
    try:
        while await asyncio.wait_for(reader.read(65536), window - (time.monotonic() - start)):
            pass
    except (asyncio.TimeoutError, ValueError):
        return None
    except OSError:
        pass
    return time.monotonic() - start


async def _big_header(server: Server, case: str, headers: dict[str, str]) -> Row:
    checks = Checks()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(_chat(server.port, f"{case} answered", extra=headers))
        await writer.drain()
        response = await asyncio.wait_for(read_response(reader), 20)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as exc:
        response, observed = None, f"connection ended: {type(exc).__name__}"
    finally:
        writer.close()
    if response is not None:
        observed = f"{response.status} {response.body[:60]!r}"
        checks.check(response.status in (400, 413, 431) or (response.status == 200 and _says(response,
                                                                                          f"{case} answered")),
                     f"status {response.status}")
    return checks.row("hostile", case, "answered right, refused with 400/413/431 or the connection closed "
                      "(never 5xx or a hang); healthy after", observed)


async def header_64k(server: Server, size: str) -> Row:
    return await _big_header(server, "a 64 KB header", {"X-Big": "a" * 65536})


async def header_1m(server: Server, size: str) -> Row:
    return await _big_header(server, "a 1 MB header", {"X-Big": "a" * 2**20})


async def many_headers(server: Server, size: str) -> Row:
    return await _big_header(server, "10 000 headers", {f"X-H{i}": "v" for i in range(10_000)})


async def pipelining(server: Server, size: str) -> Row:
    data = _chat(server.port, "pipelined one", close=False) + _chat(server.port, "pipelined two")
    checks = Checks()
    try:
        first, second = await asyncio.wait_for(_exchange(server.port, data, 2), 30)
    except (OSError, asyncio.TimeoutError) as exc:
        first = second = None
        checks.check(False, f"{type(exc).__name__}")
    checks.check(_says(first, "pipelined one"), "the first answer is not the first request's")
    checks.check(_says(second, "pipelined two"), "the second answer is not the second request's")
    statuses = [r.status if r else None for r in (first, second)]
    return checks.row("hostile", "pipelining: two requests in one write", "both answered, in order",
                      f"statuses {statuses}")


async def _exchange(port: int, data: bytes, count: int) -> list[RawResponse | None]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        return [await read_response(reader) for _ in range(count)]
    finally:
        writer.close()


def _timed_row(case: str, flag: str, closed: float | None, window: float, what: str) -> Row:
    checks = Checks()
    within = TIMEOUT + 1.5
    checks.check(closed is not None and closed <= within, f"not closed within {within:g} s")
    observed = f"closed after {closed:.1f} s" if closed is not None else f"still open after {window:g} s"
    return checks.row("hostile", case, f"closed by the server after ~{TIMEOUT} s ({flag} {TIMEOUT}); {what}",
                      observed)


async def _time_to_close(server: Server, window: float, opening: bytes, answered_first: bool = False,
                         drip: bool = False) -> float | None:
    """Send ``opening`` (then one more header byte a second if ``drip``; read the answer
    first if ``answered_first``) and time how long until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)

    async def trickle() -> None:
        for _ in range(int(window) + 2):
            await asyncio.sleep(1)
            writer.write(b"a")
            await writer.drain()

    dripping = asyncio.ensure_future(trickle()) if drip else None
    try:
        writer.write(opening)
        if answered_first and await asyncio.wait_for(read_response(reader), 10) is None:
            return 0.0
        return await _closed_after(reader, window)
    finally:
        if dripping is not None:
            dripping.cancel()
            await asyncio.gather(dripping, return_exceptions=True)
        writer.close()


async def slow_headers(server: Server, size: str) -> Row:
    opening = f"POST {API_PATHS['openai']} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".encode()
    closed = await _time_to_close(server, WINDOW[size], opening, drip=True)
    return _timed_row("slow headers (one byte per second)", "--timeout-headers", closed, WINDOW[size],
                      "bytes kept coming")


async def silent_socket(server: Server, size: str) -> Row:
    closed = await _time_to_close(server, WINDOW[size], b"")
    return _timed_row("silent socket (connect, send nothing)", "--timeout-headers", closed,
                      WINDOW[size], "no byte sent")


async def idle_keep_alive(server: Server, size: str) -> Row:
    opening = request_bytes("GET", "/health", server.port, close=False)
    closed = await _time_to_close(server, WINDOW[size], opening, answered_first=True)
    return _timed_row("idle keep-alive connection", "--timeout-keep-alive", closed, WINDOW[size],
                      "idle after one answered request")


SOCKET_ROWS: list[Callable[[Server, str], Awaitable[Row]]] = [
    header_64k, header_1m, many_headers, pipelining, slow_headers, silent_socket, idle_keep_alive]
