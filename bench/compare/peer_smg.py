"""SMG's Rust reasoning parser through lmparse's driver binary (peer side: standard library only).

The binary is ``bench/compare/rust/smg_driver.rs`` built inside a copy of the crate by
``scripts/setup_rust_peer.sh``; its docstring has the protocol.  This adapter hands it the
pieces ``Bench`` cut (so the chunking is the one every peer gets), reads back the concatenated
outputs to check, and lets it time its own runs (``time_runs``): no interpreter and no pipe in
its timing.  The crate's calls are ``parse_reasoning_streaming_incremental(chunk)`` per chunk
and ``detect_and_parse_reasoning(text)`` for a whole reply; it has reasoning parsers only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any

from .cases import Case, complete_result

__all__ = ["Adapter", "DriverError", "driver_path", "encode_load", "parse_answer"]

DRIVER_ENV = "LMPARSE_BENCH_SMG_DRIVER"


class DriverError(Exception):
    """The driver answered ``error ...`` or exited."""


def driver_path() -> Path:
    """``$LMPARSE_BENCH_SMG_DRIVER``, else where scripts/setup_rust_peer.sh builds it."""
    configured = os.environ.get(DRIVER_ENV)
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("LMPARSE_PEERS_CACHE", Path.home() / ".cache" / "lmparse" / "peers"))
    return cache / "smg-reasoning-parser" / "target" / "release" / "examples" / "smg_driver"


def encode_load(parser: str, pieces: list[str]) -> bytes:
    """``load PARSER TEXT_BYTES PIECES``, the UTF-8 text, then each piece's byte length (u32 LE)."""
    text = "".join(pieces)
    data = text.encode()
    # ASCII text (every case but a unicode one): a piece's bytes are its characters, no re-encoding.
    lengths = array("I", map(len, pieces) if len(data) == len(text) else (len(p.encode()) for p in pieces))
    if sys.byteorder == "big":
        lengths.byteswap()
    return f"load {parser} {len(data)} {len(pieces)}\n".encode() + data + lengths.tobytes()


def parse_answer(line: bytes) -> list[str]:
    """The words after ``ok``; ``error MESSAGE`` (or end of output) raises ``DriverError``."""
    words = line.decode("utf-8", "replace").split()
    if not words:
        raise DriverError("the driver exited (see the worker's log for its stderr)")
    if words[0] != "ok":
        raise DriverError(line.decode("utf-8", "replace").strip())
    return words[1:]


class _Driver:
    """The binary as a subprocess: one request at a time."""

    def __init__(self, binary: Path) -> None:
        if not binary.exists():
            raise DriverError(f"unavailable: no driver at {binary} (run scripts/setup_rust_peer.sh)")
        self._proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, request: bytes) -> list[str]:
        """Send one whole request (header line and payload); the answer's words after ``ok``."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
        except BrokenPipeError:
            raise DriverError("the driver exited (see the worker's log for its stderr)") from None
        return parse_answer(proc.stdout.readline())

    def read_texts(self, sizes: list[str]) -> list[str]:
        assert self._proc.stdout is not None
        return [self._proc.stdout.read(int(size)).decode() for size in sizes]


class Adapter:
    def __init__(self, binary: Path | None = None) -> None:
        self._driver = _Driver(binary or driver_path())
        self.impl = "SMG " + " ".join(self._driver.ask(b"hello\n"))
        self._loaded: object = None  # what the driver holds: a prepared piece list, or a case's whole text

    def new_state(self, case: Case, parsers: dict) -> str:
        if parsers.get("tool") or not parsers.get("reasoning"):
            raise ValueError(f"SMG's crate has reasoning parsers only, not {parsers}")
        return str(parsers["reasoning"])

    def _load(self, parser: str, pieces: list[str], key: object) -> None:
        if self._loaded is not key:
            self._loaded = None
            self._driver.ask(encode_load(parser, pieces))
            self._loaded = key

    def _parse(self, request: bytes) -> list[Any]:
        normal, reasoning = self._driver.read_texts(self._driver.ask(request))
        return complete_result(normal, reasoning, ())

    def prepare(self, case: Case, pieces: list[str]) -> list[str]:
        return list(pieces)  # a fresh list per chunking: its identity says what the driver holds

    def stream(self, state: str, fed: list[str]) -> list[Any]:
        self._load(state, fed, fed)
        return self._parse(b"stream\n")

    feed = stream  # never timed from Python: ``time_runs`` times the driver's own loop

    def complete(self, state: str, case: Case) -> list[Any]:
        self._load(state, [case.text], case)
        return self._parse(b"complete\n")

    def time_runs(self, state: str, case: Case, fed: list[str] | None, min_sample: float) -> dict:
        """The driver's best-of-one sample of fresh parsers lasting ``min_sample``: seconds per run."""
        if fed is None:
            self._load(state, [case.text], case)
        else:
            self._load(state, fed, fed)
        wall, loops = self._driver.ask(f"time {'complete' if fed is None else 'stream'} {min_sample} 1\n".encode())
        return {"wall": float(wall), "cpu": None, "loops": int(loops)}
