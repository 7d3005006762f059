"""A scripted vLLM (``POST /v1/completions``, streaming) on a raw asyncio server, with faults.

The fault is named in the prompt (``FAULT:name`` in the user's message, which the chat
template carries through): a clean reply, a stall, a reset, garbage, an HTTP error or an
error event, before the stream or mid-stream, or an endless fast stream.  The fake
notes when each connection ended and how many bytes it managed to send."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import struct
import time
from collections.abc import Awaitable, Callable

__all__ = ["FakeEngine", "SECRET", "REASONING", "ANSWER", "FAULTS"]

SECRET = "SECRET-UPSTREAM-DETAIL"  # in every upstream error text: must never reach a client
REASONING = "The user asks a question; I answer it."
ANSWER = "The answer is forty-two."
_REPLY_PIECES = ["<think>", "\n", *REASONING.split(" "), "\n", "</think>", "\n\n", *ANSWER.split(" ")]
_FAULT = re.compile(r"FAULT:([a-z0-9-]+)")
_HEAD_OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_BEFORE_MID = 3  # events sent before a mid-stream fault


def _pieces() -> list[str]:
    out = []
    for i, piece in enumerate(_REPLY_PIECES):
        spaced = i > 0 and piece not in ("\n", "\n\n", "</think>") and _REPLY_PIECES[i - 1] not in ("\n", "\n\n",
                                                                                                    "<think>")
        out.append(" " + piece if spaced else piece)
    return out


def _event(data: object) -> bytes:
    payload = (data if isinstance(data, bytes) else json.dumps(data).encode())
    line = b"data: " + payload + b"\n\n"
    return f"{len(line):x}\r\n".encode() + line + b"\r\n"


def _token(text: str, n: int, finish: str | None = None) -> bytes:
    choice = {"index": 0, "text": text, "token_ids": [1000 + n], "logprobs": None, "finish_reason": finish,
              "stop_reason": None}
    if n == 0:
        choice["prompt_token_ids"] = list(range(20))
    return _event({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "qwen", "choices": [choice]})


def _http_error(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"object": "error", "message": message, "type": reason, "param": None, "code": status}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode() + body


def _error_event(code: int) -> bytes:
    return _event({"error": {"object": "error", "message": f"{SECRET}: CUDA out of memory at layer 7",
                             "type": "InternalServerError" if code >= 500 else "BadRequestError", "code": code}})


class FakeEngine:
    def __init__(self) -> None:
        self.ended: dict[str, float] = {}  # fault -> when its last connection ended
        self.sent: dict[str, int] = {}  # fault -> bytes written so far
        self.open = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening; connections still open are aborted (their handlers then end)."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for _ in range(100):
            if not self.open:
                break
            await asyncio.sleep(0.01)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self._writers.add(writer)
        fault = "?"
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            sized = re.search(rb"(?i)content-length: *(\d+)", head)
            if sized is None:
                # A request without a body: lmparse's readiness probe (GET /health), answered as
                # vLLM answers it; any other path is not this engine's.
                fault = "health"
                ok = head.startswith(b"GET /health ")
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n" if ok else
                             b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                return
            length = int(sized.group(1))
            body = json.loads(await reader.readexactly(length))
            found = _FAULT.search(body.get("prompt", ""))
            fault = found.group(1) if found else "ok"
            self.sent[fault] = 0
            await FAULTS[fault](self, fault, reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open -= 1
            self._writers.discard(writer)
            self.ended[fault] = time.monotonic()
            writer.close()

    async def _write(self, fault: str, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()
        self.sent[fault] += len(data)

    async def _stream(self, fault: str, writer: asyncio.StreamWriter, count: int | None = None) -> None:
        """The reply's events (the first ``count``; all and the end when None)."""
        pieces = _pieces()
        await self._write(fault, writer, _HEAD_OK)
        for n, piece in enumerate(pieces[:count]):
            await self._write(fault, writer, _token(piece, n))
        if count is None:
            await self._write(fault, writer, _token("", len(pieces), "stop") + _event(b"[DONE]") + b"0\r\n\r\n")


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """A stall: nothing more is sent; returns when the peer (lmparse) closes."""
    while await reader.read(65536):
        pass


def _reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST
    writer.transport.abort()


Fault = Callable[[FakeEngine, str, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _ok(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await e._stream(f, w)


async def _stall_before(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await _until_closed(r)


async def _stall_mid(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await e._stream(f, w, _BEFORE_MID)
    await _until_closed(r)


async def _reset_before(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    _reset(w)


async def _reset_mid(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await e._stream(f, w, _BEFORE_MID)
    await asyncio.sleep(0.1)
    _reset(w)


async def _garbage_before(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await e._write(f, w, b"\x00\xff\xfeSSH-2.0-not-http\r\n" + bytes(range(256)) + b"\r\n\r\n")


async def _garbage_mid(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    await e._stream(f, w, _BEFORE_MID)
    await e._write(f, w, _event(b"{not json at all " + bytes(range(1, 32))) + b"zz\r\n\xff\xfe garbage\r\n")


def _status_before(status: int) -> Fault:
    reason = "Bad Request" if status < 500 else "Internal Server Error"

    async def fault(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await e._write(f, w, _http_error(status, reason, f"{SECRET}: the engine refused ({status})"))
    return fault


def _status_event_mid(code: int) -> Fault:
    async def fault(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await e._stream(f, w, _BEFORE_MID)
        await e._write(f, w, _error_event(code) + _event(b"[DONE]") + b"0\r\n\r\n")
    return fault


async def _endless(e: FakeEngine, f: str, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    """As fast as the socket takes it, until lmparse closes: a slow client's backlog must
    stay in the socket buffers (drain blocks), not pile up in lmparse."""
    await e._write(f, w, _HEAD_OK)
    filler = " lorem ipsum dolor sit amet" * 8
    n = 0
    while True:
        await e._write(f, w, _token(filler, n + 1))
        n += 1


FAULTS: dict[str, Fault] = {
    "ok": _ok, "stall-before": _stall_before, "stall-mid": _stall_mid, "reset-before": _reset_before,
    "reset-mid": _reset_mid, "garbage-before": _garbage_before, "garbage-mid": _garbage_mid,
    "http-400-before": _status_before(400), "http-500-before": _status_before(500),
    "error-event-500": _status_event_mid(500), "error-event-400": _status_event_mid(400), "endless": _endless,
}
