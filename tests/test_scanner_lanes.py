"""The JSON fast lane's scanner try is all or nothing: a chunk is consumed whole when the value
goes on through it (the same state a plain scan leaves), otherwise nothing changes."""

from __future__ import annotations

import random

import pytest

from lmparse.tools.json_scanner import JsonValueScanner, string_end

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


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("plain", -1),
        ('a"b', 2),  # closes at its first quote
        ('\\"', -1),  # an escaped quote
        ('\\\\"', 3),  # an escaped backslash, then the closing quote
        ('\\\\\\"', -1),  # three backslashes: the quote is escaped
        ('x\\"y\\\\\\\\"z', 9),  # four backslashes before the second quote: it closes
        ('"', 1),
        ("ab\\", -2),  # ends inside an escape
        ("ab\\\\", -1),  # ends after an escaped backslash
        ("\\n\\t\\u00e9", -1),
    ],
)
def test_string_end(text: str, end: int) -> None:
    assert string_end(text) == end
    # the same answer as a scan from inside a string
    scanner = JsonValueScanner()
    scanner.scan('"', 0)
    consumed = scanner.scan(text, 0)
    if end > 0:
        assert (consumed, scanner.done) == (end, True)
    else:
        assert (consumed, scanner.done, scanner.escape_pending) == (len(text), False, end == -2)
