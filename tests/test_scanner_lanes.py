"""The JSON fast lane's scanner try is all or nothing: a chunk is consumed whole when the value
goes on through it (the same state a plain scan leaves), otherwise nothing changes."""

from __future__ import annotations

import random

from lmparse.tools.json_scanner import JsonValueScanner

PIECES = ["a", " ", '"', "\\", '\\"', "\\\\", "{", "}", "[", "]", ",", ":", "1", "<"]
STATE = ("depth", "in_string", "escape_pending", "done", "broken")


def _state(scanner: JsonValueScanner) -> tuple:
    return tuple(getattr(scanner, name) for name in STATE)


def _started(rng: random.Random) -> JsonValueScanner:
    scanner = JsonValueScanner()
    scanner.scan(rng.choice(['{"k": "', '["', "{", '[{"a": [']), 0)
    return scanner


def test_run_through_consumes_all_or_changes_nothing() -> None:
    rng = random.Random(14)
    for _ in range(5000):
        scanner = _started(rng)
        chunk = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 10)))
        before = _state(scanner)
        twin = JsonValueScanner()
        for name in ("_kind", "container", *STATE):
            setattr(twin, name, getattr(scanner, name))
        scanned = twin.scan(chunk, 0)
        if scanner.run_through(chunk):
            assert scanned == len(chunk) and not twin.done and _state(scanner) == _state(twin), chunk
        else:
            assert _state(scanner) == before, chunk
