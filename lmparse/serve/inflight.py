"""The generations in flight: a bound on how many run at once, and a graceful end for all.

A generation holds a slot from its start until its response ends (a stream until it
closes).  ``refusal`` says why a new one cannot start (the limit, or a shutdown under
way); ``shut_down(grace)`` refuses new ones, and ``grace`` seconds later ends each one
still running through its runner's ``interrupt``.
"""

from __future__ import annotations

import asyncio

from .errors import RequestError
from .runner import ChatRunner

__all__ = ["InFlight", "SHUTTING_DOWN"]

SHUTTING_DOWN = "the server is shutting down"


class InFlight:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0  # slots taken
        self._runners: set[ChatRunner] = set()
        self._shutting_down = False
        self.ended = asyncio.Event()  # set when the grace is over: waits that are still on go

    def refusal(self) -> RequestError | None:
        """Why a new generation may not start now (a 503), or None."""
        if self._shutting_down:
            return RequestError(SHUTTING_DOWN, status=503, kind="server_error")
        if self.active >= self.limit:
            return RequestError(f"the server is at its limit of {self.limit} concurrent generations; retry shortly",
                                status=503, kind="server_error")
        return None

    def take(self) -> None:
        self.active += 1

    def give_back(self) -> None:
        self.active -= 1

    def track(self, runner: ChatRunner) -> None:
        self._runners.add(runner)

    def done(self, runner: ChatRunner) -> None:
        self._runners.discard(runner)

    def shut_down(self, grace: float) -> None:
        """Refuse new generations from now on; end those still running in ``grace`` seconds."""
        self._shutting_down = True

        def interrupt_all() -> None:
            self.ended.set()
            for runner in list(self._runners):
                runner.interrupt(SHUTTING_DOWN)
        asyncio.get_running_loop().call_later(grace, interrupt_all)
