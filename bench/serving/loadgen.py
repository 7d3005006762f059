"""A loopback load generator cheaper than the server it loads: raw asyncio streams, no HTTP
library, no JSON parsing.

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


class _Count:
    __slots__ = ("events", "responses", "errors")

    def __init__(self) -> None:
        self.events = self.responses = self.errors = 0


async def _client(port: int, request: bytes, deadline: float, count: _Count) -> None:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while loop.time() < deadline:
            writer.write(request)
            tail = b""
            data = await reader.read(65536)
            if not data.startswith(b"HTTP/1.1 200"):
                count.errors += 1  # refused (a 503 over the concurrency limit) or closed
                return
            while True:
                if loop.time() >= deadline:
                    return  # what arrives after the deadline is not counted
                # A blank line split between two reads is counted once: ``tail`` is too
                # short to hold a whole one.
                seen = tail + data
                count.events += (seen[-len(data) - 1:]).count(b"\n\n")
                if seen.endswith(_END):
                    break
                tail = seen[-len(_END) + 1:]
                data = await reader.read(65536)
                if not data:
                    count.errors += 1
                    return
            count.responses += 1
    finally:
        writer.close()


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
    print(json.dumps(asyncio.run(run(port, path, clients, seconds, body))))


if __name__ == "__main__":
    main(sys.argv[1:])
