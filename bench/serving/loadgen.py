"""A loopback load generator cheaper than the server it loads: one ``asyncio.Protocol`` per
connection (the loop calls it with each read; no stream reader, no coroutine per read), no
HTTP library, no JSON parsing.

``python -m bench.serving.loadgen PORT PATH CLIENTS SECONDS BODY_FILE [CPU]`` opens CLIENTS
kept-alive connections to 127.0.0.1:PORT and has each POST the body, read the streamed
response to its end, and ask again, until SECONDS have passed.  It counts SSE events (each
ends with a blank line, which JSON data never holds) as they arrive and prints one JSON line:
events, completed responses, the seconds measured, and the CPU seconds this process spent.
Pinned to CPU when given, away from the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

__all__ = ["main"]

_END = b"0\r\n\r\n"  # the last chunk of a chunked body
_OK = b"HTTP/1.1 200"


class _Count:
    __slots__ = ("events", "responses", "errors")

    def __init__(self) -> None:
        self.events = self.responses = self.errors = 0


class _Client(asyncio.Protocol):
    """One kept-alive connection asking again each time a response has ended."""

    def __init__(self, request: bytes, deadline: float, count: _Count, done: asyncio.Future[None]) -> None:
        self.request, self.deadline, self.count, self.done = request, deadline, count, done
        self.transport: asyncio.Transport | None = None
        self.fresh = True  # the next read starts a response (its status line)
        self.tail = b""  # the last bytes read: a blank line or the body's end split between reads

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if self.fresh:
            if not data.startswith(_OK):
                self.count.errors += 1  # refused (a 503 over the concurrency limit)
                self._stop()
                return
            self.fresh = False
        count = self.count
        count.events += data.count(b"\n\n") + (self.tail[-1:] == b"\n" and data[:1] == b"\n")
        ended = data.endswith(_END) if len(data) >= len(_END) else (self.tail + data).endswith(_END)
        self.tail = data[-len(_END):]
        if ended:
            count.responses += 1
            self.fresh, self.tail = True, b""
            self.transport.write(self.request)  # type: ignore[union-attr]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            if asyncio.get_running_loop().time() < self.deadline:
                self.count.errors += 1  # the server closed it before the deadline
            self.done.set_result(None)

    def _stop(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def _client(port: int, request: bytes, deadline: float, count: _Count) -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    _, client = await loop.create_connection(lambda: _Client(request, deadline, count, done), "127.0.0.1", port)
    # At the deadline the connection is closed: what would arrive after it is not counted.
    loop.call_at(deadline, client._stop)
    await done


async def run(port: int, path: str, clients: int, seconds: float, body: bytes) -> dict:
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    count = _Count()
    loop = asyncio.get_running_loop()
    cpu, deadline = time.process_time(), loop.time() + seconds
    await asyncio.gather(*(_client(port, head + body, deadline, count) for _ in range(clients)),
                         return_exceptions=True)
    return {"events": count.events, "responses": count.responses, "errors": count.errors, "seconds": seconds,
            "client_cpu": time.process_time() - cpu}


def main(argv: list[str]) -> None:
    port, path, clients, seconds, body_file = int(argv[0]), argv[1], int(argv[2]), float(argv[3]), argv[4]
    if len(argv) > 5 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(argv[5])})
    with open(body_file, "rb") as f:
        body = f.read()
    try:  # libuv's loop: a read costs the client a fraction of what it costs the server
        import uvloop
    except ImportError:
        print(json.dumps(asyncio.run(run(port, path, clients, seconds, body))))
    else:
        print(json.dumps(uvloop.run(run(port, path, clients, seconds, body))))


if __name__ == "__main__":
    main(sys.argv[1:])
