"""Connections under ``lmparse serve``: a deadline for request heads, and a graceful shutdown.

uvicorn closes a kept-alive connection that stays silent (``timeout_keep_alive``) but
waits for ever on one that never sends a byte or trickles its request head a byte at a
time, so a few hundred idle sockets hold a few hundred connections open.
``head_timeout_protocol(seconds)`` is uvicorn's h11 protocol with one more timer: from the
moment a connection opens, and again after each response, a complete request head must
arrive within ``seconds`` or the connection is closed.  (The body has its own pace limit
in the app, ``--timeout-body``.)  Its transport is a ``CoalescingTransport``: the events
a turn of the event loop writes leave in one system call.

``GracefulServer`` is uvicorn's server that, when told to stop (SIGTERM, Ctrl-C), first
tells the app (``shut_down(grace)``): new generations are refused with a 503, those in
flight run on for ``grace`` seconds and are then ended cleanly, each stream with its
API's error event, before uvicorn closes what remains.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import orjson
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import openai_error_body

__all__ = ["HeadTimeoutProtocol", "CoalescingTransport", "head_timeout_protocol", "GracefulServer",
           "DEFAULT_TIMEOUT_HEADERS", "DEFAULT_TIMEOUT_KEEP_ALIVE", "DEFAULT_SHUTDOWN_GRACE",
           "DEFAULT_MAX_HEADER_BYTES"]

DEFAULT_TIMEOUT_HEADERS = 10.0  # seconds for a complete request head
DEFAULT_TIMEOUT_KEEP_ALIVE = 5.0  # seconds a kept-alive connection may stay silent (uvicorn's default)
DEFAULT_SHUTDOWN_GRACE = 30.0  # seconds in-flight generations may run on after a stop signal
DEFAULT_MAX_HEADER_BYTES = 16 * 1024  # request line and headers (h11's and uvicorn's default)


class CoalescingTransport:
    """A connection's transport whose writes are joined until the event loop's next turn.

    A stream writes one SSE event per token; written one by one, each is a system call
    (about 10 µs on loopback), while events made in the same turn of the loop can go out
    as one.  Nothing waits: the join is flushed on the loop's very next turn, before the
    writer runs again, and on ``close``.  Everything else is the wrapped transport's."""

    __slots__ = ("_transport", "_loop", "_parts")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._parts:
            self._loop.call_soon(self.flush)
        self._parts.append(data)

    def flush(self) -> None:
        if self._parts:
            data = b"".join(self._parts)
            self._parts.clear()
            if not self._transport.is_closing():  # the connection was lost meanwhile
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for request heads and a bound on their size
    (``head_timeout_protocol`` makes one with the server's values)."""

    head_timeout = DEFAULT_TIMEOUT_HEADERS
    max_header_bytes = DEFAULT_MAX_HEADER_BYTES
    _head_timer: asyncio.TimerHandle | None = None  # armed while a request head is awaited
    _head_bytes = 0  # received while awaiting the head
    _tail = b""  # the last bytes of the previous read, for a head end cut between reads
    _timed_cycle: Any = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_timer is not None:
            before, self._head_bytes = self._head_bytes, self._head_bytes + len(data)
            # h11 bounds a head that is still incomplete; one that arrives whole in one read
            # is bounded here: its end must lie within the limit.
            if self._head_bytes > self.max_header_bytes and b"\r\n\r\n" not in (
                    self._tail + data[:max(0, self.max_header_bytes - before) + 4]):
                self._refuse(431, f"the request line and headers exceed {self.max_header_bytes} bytes")
                return
            self._tail = data[-3:]
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and self.cycle is not self._timed_cycle:
            self._timed_cycle = self.cycle  # a new request's head is complete
            self._disarm()

    def on_response_complete(self) -> None:
        self._arm()  # before uvicorn reads a pipelined request, which disarms it again
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read, answered in JSON like every other error."""
        if self._head_bytes > self.max_header_bytes:
            self._refuse(431, f"the request line and headers exceed {self.max_header_bytes} bytes")
        else:
            self._refuse(400, "the request is not valid HTTP/1.1")

    def _refuse(self, status: int, text: str) -> None:
        self._disarm()
        body = orjson.dumps(openai_error_body(text))
        head = (f"HTTP/1.1 {status} {'Bad Request' if status == 400 else 'Request Header Fields Too Large'}\r\n"
                f"content-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n")
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:  # else only the close is left to say
            self.transport.write(head.encode() + body)  # raw: h11's state may be past answering
        self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._head_bytes, self._tail = 0, b""
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def head_timeout_protocol(seconds: float, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request head is not complete
    ``seconds`` after the connection opened or its last response ended, and answering an
    unreadable or oversized head (over ``max_header_bytes``, which must also be the
    config's ``h11_max_incomplete_event_size``) in JSON."""
    return type("HeadTimeoutProtocol", (HeadTimeoutProtocol,), {"head_timeout": seconds,
                                                                "max_header_bytes": max_header_bytes})


class GracefulServer(uvicorn.Server):
    """uvicorn's server that lets the app end its generations cleanly before it stops."""

    def __init__(self, config: uvicorn.Config, grace: float, on_ready: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.grace = grace
        self.on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's startup (the app's, then binding the port: a taken port exits here), then
        ``on_ready``: nothing announces a server that never listened."""
        await super().startup(sockets)
        if self.started and not self.should_exit and self.on_ready is not None:
            self.on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        shut_down = getattr(self.config.app, "shut_down", None)
        if shut_down is not None:
            shut_down(self.grace)
        await super().shutdown(sockets)
