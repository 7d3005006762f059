"""The comparison run: every format x chunking x size, lmparse and each peer checked, then timed in pairs.

For one configuration: lmparse's output is checked, then each peer's (in its worker);
an implementation whose output is wrong is reported as wrong and not timed.  Timing
alternates lmparse, peer, lmparse, peer ... for ``pairs`` pairs and keeps the median
of the per-pair ratios, so both sides saw the same machine load.  A peer that runs past
the limit is killed and reported as such, and the larger sizes of that format and
chunking are skipped for it; a peer whose check alone took over ``SLOW_S`` is timed
in one pair.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any, NamedTuple

from .cases import Case, Chunking, chunk_name
from .client import PeerGone, Timeout, Worker
from .formats import Format, build_case
from .measure import Bench

__all__ = ["Plan", "run"]

SLOW_S = 10.0


class Plan(NamedTuple):
    formats: list[Format]
    sizes: list[int]
    chunks: list[Chunking]
    pairs: int
    limit: float  # seconds a peer may take for one check or one timed run
    min_sample: float
    tokenizers: Path | None


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _row(fmt: Format, size: int, chunk: Chunking, impl: str, peer: str, status: str, **extra: Any) -> dict:
    return {"format": fmt.label, "size": size, "chunk": chunk, "impl": impl, "peer": peer, "status": status,
            "wall_s": None, "mb_per_s": None, "ratio": None, "pairs": 0, "chunking": None, "error": None, **extra}


class _Config(NamedTuple):
    fmt: Format
    size: int
    chunk: Chunking
    key: str
    case: Case


def _time_pairs(ours: Bench, worker: Worker, config: _Config, pairs: int, plan: Plan, peer_estimate: float,
                ours_walls: list[float]) -> tuple[list[float], list[float]]:
    ours_estimate = ours.check(config.key, config.chunk)["seconds"]
    peer_walls, ratios = [], []
    for _ in range(pairs):
        mine = ours.time(config.key, config.chunk, plan.min_sample, ours_estimate)["wall"]
        answer = worker.request({"op": "time", "key": config.key, "chunk": config.chunk,
                                 "min_sample": plan.min_sample, "estimate": peer_estimate}, None,
                                plan.limit * 1.5 + plan.min_sample)
        if "wall" not in answer:
            raise PeerGone(answer.get("error", "no timing"))
        ours_walls.append(mine)
        peer_walls.append(answer["wall"])
        ratios.append(answer["wall"] / mine)
    return peer_walls, ratios


def _peer_row(ours: Bench, worker: Worker, config: _Config, plan: Plan, ours_walls: list[float]) -> dict:
    fmt, size, chunk = config.fmt, config.size, config.chunk
    parsers = fmt.peers[worker.peer]
    impl = worker.impl or worker.peer
    try:
        check = worker.request({"op": "check", "key": config.key, "chunk": chunk}, (config.key, config.case, parsers),
                               plan.limit)
        impl = worker.impl or impl
        if check["status"] != "ok":
            return _row(fmt, size, chunk, impl, worker.peer, check["status"], error=check.get("error"))
        pairs = 1 if check["seconds"] > SLOW_S else plan.pairs
        walls, ratios = _time_pairs(ours, worker, config, pairs, plan, check["seconds"], ours_walls)
    except Timeout:
        return _row(fmt, size, chunk, impl, worker.peer, "timeout", error=f"ran past {plan.limit:.0f} s")
    except PeerGone as exc:
        return _row(fmt, size, chunk, impl, worker.peer, "error", error=str(exc))
    wall = statistics.median(walls)
    return _row(fmt, size, chunk, impl, worker.peer, "ok", wall_s=wall, mb_per_s=len(config.case.text) / wall / 1e6,
                ratio=statistics.median(ratios), pairs=pairs, chunking=check["chunking"], parsers=parsers,
                error=check.get("chars_error"))


def _configuration(ours: Bench, workers: list[Worker], config: _Config, plan: Plan,
                   skipped: dict[str, str]) -> list[dict]:
    fmt, size, chunk = config.fmt, config.size, config.chunk
    ours.load(config.key, config.case, fmt.ours)
    check = ours.check(config.key, chunk)
    if check["status"] != "ok":
        return [_row(fmt, size, chunk, ours.adapter.impl, "lmparse", check["status"], error=check.get("error"))]
    rows, walls = [], []
    for worker in workers:
        if worker.peer in skipped:
            rows.append(_row(fmt, size, chunk, worker.impl or worker.peer, worker.peer, "skipped",
                             error=skipped[worker.peer]))
            continue
        _progress(f"  {fmt.label:13} {size:>8} chunk {chunk_name(chunk):8} {worker.peer}")
        row = _peer_row(ours, worker, config, plan, walls)
        if row["status"] == "timeout":
            skipped[worker.peer] = f"{row['error']} at {size} chars"
        rows.append(row)
    for _ in range(plan.pairs if not walls else 0):
        walls.append(ours.time(config.key, chunk, plan.min_sample, check["seconds"])["wall"])
    wall = statistics.median(walls)
    ours_row = _row(fmt, size, chunk, ours.adapter.impl, "lmparse", "ok", wall_s=wall,
                    mb_per_s=len(config.case.text) / wall / 1e6, pairs=len(walls), chunking=check["chunking"],
                    parsers=fmt.ours, error=check.get("chars_error"))
    return [ours_row, *rows]


def run(plan: Plan, ours: Bench, workers: list[Worker]) -> list[dict]:
    """Every row of the run; sizes ascending within a format and chunking (a timeout skips the rest)."""
    rows: list[dict] = []
    cases: dict[tuple[str, int], Case] = {}
    for fmt in plan.formats:
        for chunk in plan.chunks:
            skipped: dict[str, str] = {}
            for size in sorted(plan.sizes):
                case = cases.get((fmt.label, size))
                if case is None:
                    case = cases[(fmt.label, size)] = build_case(fmt, size, plan.tokenizers)
                present = [w for w in workers if w.peer in fmt.peers]
                config = _Config(fmt, size, chunk, f"{fmt.label}/{size}", case)
                rows.extend(_configuration(ours, present, config, plan, skipped))
    return rows
