"""Whether each upstream engine is ready, for ``/health``: probed, cached for a moment.

A load balancer in front of several gateway replicas polls ``/health``; each poll must not
become a request to the engine, so a result is kept for ``TTL`` seconds.  An engine is
ready when its own health route answers 200 (vLLM, SGLang and llama.cpp have ``/health``;
where it is missing, ``/v1/models`` answering 200 will do).  The engine's URL is never in
the answer: it stays in the server's configuration and log.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

__all__ = ["Readiness", "TTL"]

TTL = 1.0  # seconds a probe's result is reused
_PROBE_TIMEOUT = 2.0


class Readiness:
    """The readiness of one upstream engine (anything with ``url`` and ``client()``)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._checked = -TTL
        self._state = "unknown"
        self._lock = asyncio.Lock()

    async def state(self) -> str:
        """``ready``, ``loading`` (it answered 503), ``unhealthy`` (another status) or ``unreachable``."""
        async with self._lock:  # one probe at a time, whatever the number of pollers
            if time.monotonic() - self._checked >= TTL:
                self._state = await self._probe()
                self._checked = time.monotonic()
            return self._state

    async def _probe(self) -> str:
        client, base = self._engine.client(), self._engine.url
        try:
            status = 404
            for path in ("/health", "/v1/models"):
                response = await client.get(base + path, timeout=_PROBE_TIMEOUT)
                status = response.status_code
                if status != 404:
                    break
        except Exception:  # refused, reset, timed out: the engine is not there
            return "unreachable"
        return "ready" if status == 200 else "loading" if status == 503 else "unhealthy"
