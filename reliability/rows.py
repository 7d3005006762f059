"""One checked case of the reliability run."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Row", "Checks"]

# What a failing row may be waiting for: work the lead is merging from other branches.
HEADER_TIMEOUT = "the lead's --timeout-headers"
KEEP_ALIVE = "the lead's --timeout-keep-alive"
SHUTDOWN = "the lead's graceful shutdown (in-flight requests finished or ended)"
UPSTREAM_BODIES = "the lead's 5xx bodies (upstream detail in the log only, x-request-id)"

# Failing rows that are real bugs, reported to the lead with where they are: the run reports
# them as failures, the reduced test tolerates them.  Remove an entry once its row passes.
_STALL = ("lead: lmparse/serve/app.py _start_generation awaits stream.open() with nobody watching for "
          "http.disconnect: a client that leaves before the engine's first byte leaves the upstream request "
          "open (until the 600 s upstream timeout)")
_MID_500 = ("lead: lmparse/serve/app.py _start_generation's `except Exception` turns a non-streaming "
            "UpstreamError (502) into a 500 'generation failed: <upstream text>' and logs a traceback")
_RESET_413 = ("lead: on main e9b87a2 (not on this branch's base) a 10 MB POST gets ReadError instead of the 413: "
              "the server closes with the body unread and the kernel resets the connection (look at "
              "lmparse/serve/connections.py's h11 protocol and app.py _body's early 413)")
KNOWN_BUGS = {
    "openai: user = 12345": "lead: lmparse/serve/openai.py parse_request never checks `user` (any JSON accepted)",
    "responses: user = 12345": "lead: lmparse/serve/responses/request.py echoes `user` unchecked (line ~329)",
    "responses: truncation = 12345": "lead: lmparse/serve/responses/request.py echoes `truncation` unchecked "
                                     "(line ~329; only 'auto'/'disabled' are valid)",
    "stall before the first byte, then the client leaves": _STALL,
    "server after the faults": _STALL + "; and " + _MID_500,
    "SIGTERM with a stalled upstream request in flight": "lead: the same stall; main's --shutdown-grace ends "
                                                         "generations in flight, not a request still in open()",
    **{case: _RESET_413 for case in ("10 MB body (Content-Length)", "10 MB body (chunked, no length)")},
    **{f"{fault} mid-stream, openai non-streaming": _MID_500
       for fault in ("reset-mid", "garbage-mid", "error-event-500", "error-event-400")},
}


def mark_known(rows: list[Row]) -> list[Row]:
    """Failing rows that are known bugs get the bug as what they wait for."""
    for row in rows:
        if not row.ok and row.waits_for is None and row.case in KNOWN_BUGS:
            row.waits_for = KNOWN_BUGS[row.case]
    return rows


@dataclass
class Row:
    """``requests``: how many requests the row covers; ``lost``: how many got no correct
    answer.  ``waits_for`` names the pending change a failing row needs (None: a real failure)."""

    section: str
    case: str
    expected: str
    observed: str
    ok: bool
    requests: int = 1
    lost: int = 0
    waits_for: str | None = None


class Checks:
    """Named pass/fail checks of one row: the failed ones go into its observed text, and a
    row whose only failures are pending checks waits for their change."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.pending: list[str] = []

    def check(self, ok: bool, what: str, pending: str | None = None) -> bool:
        if not ok:
            self.failed.append(what)
            if pending is not None:
                self.pending.append(pending)
        return ok

    @property
    def ok(self) -> bool:
        return not self.failed

    def waits_for(self) -> str | None:
        if self.failed and len(self.pending) == len(self.failed):
            return "; ".join(dict.fromkeys(self.pending))
        return None

    def row(self, section: str, case: str, expected: str, observed: str, requests: int = 1, lost: int = 0) -> Row:
        """``lost``: requests that got no right answer (a refused hostile request is not lost)."""
        text = observed + ("" if self.ok else "; FAILED: " + "; ".join(self.failed))
        return Row(section, case, expected, text, self.ok, requests, lost, self.waits_for())
