"""Connections under ``lmparse serve``: a deadline for request heads, and a graceful shutdown.

uvicorn closes a kept-alive connection that stays silent (``timeout_keep_alive``) but
waits for ever on one that never sends a byte or trickles its request head a byte at a
time, so a few hundred idle sockets hold a few hundred connections open.
``head_timeout_protocol(seconds)`` is uvicorn's h11 protocol with one more timer: from the
moment a connection opens, and again after each response, a complete request head must
arrive within ``seconds`` or the connection is closed.  (The body has its own pace limit
in the app, ``--timeout-body``.)

``GracefulServer`` is uvicorn's server that, when told to stop (SIGTERM, Ctrl-C), first
tells the app (``shut_down(grace)``): new generations are refused with a 503, those in
flight run on for ``grace`` seconds and are then ended cleanly, each stream with its
API's error event, before uvicorn closes what remains.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["head_timeout_protocol", "GracefulServer", "DEFAULT_TIMEOUT_HEADERS", "DEFAULT_TIMEOUT_KEEP_ALIVE",
           "DEFAULT_SHUTDOWN_GRACE"]

DEFAULT_TIMEOUT_HEADERS = 10.0  # seconds for a complete request head
DEFAULT_TIMEOUT_KEEP_ALIVE = 5.0  # seconds a kept-alive connection may stay silent (uvicorn's default)
DEFAULT_SHUTDOWN_GRACE = 30.0  # seconds in-flight generations may run on after a stop signal


def head_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request head is not complete
    ``seconds`` after the connection opened or its last response ended."""

    class HeadTimeoutProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _timed_cycle: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and self.cycle is not self._timed_cycle:
                self._timed_cycle = self.cycle  # a new request's head is complete
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # before uvicorn reads a pipelined request, which disarms it again
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(seconds, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadTimeoutProtocol


class GracefulServer(uvicorn.Server):
    """uvicorn's server that lets the app end its generations cleanly before it stops."""

    def __init__(self, config: uvicorn.Config, grace: float) -> None:
        super().__init__(config)
        self.grace = grace

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        shut_down = getattr(self.config.app, "shut_down", None)
        if shut_down is not None:
            shut_down(self.grace)
        await super().shutdown(sockets)
