"""Best-of-N timing with the garbage collector off; shared by our side and the peer runners.

A sample runs ``loops`` fresh states back to back (states are built before the
clock starts), with ``loops`` chosen so that a sample lasts at least
``min_sample`` seconds: small inputs are timed over many runs, large ones once.
The reported time is the best sample divided by ``loops``, wall clock
(``perf_counter``) and CPU (``process_time``) separately.  Standard library only.
"""

from __future__ import annotations

import gc
import math
import time
from typing import NamedTuple, TypeVar
from collections.abc import Callable

__all__ = ["Settings", "Timing", "best_of", "record"]

S = TypeVar("S")


class Settings(NamedTuple):
    repeats: int  # samples per configuration (best one wins)
    min_sample: float  # seconds a sample should last at least
    budget: float  # stop adding samples once this many seconds were spent (after 2)


class Timing(NamedTuple):
    wall: float  # seconds per run, best sample
    cpu: float  # CPU seconds per run, best sample
    loops: int
    samples: int


def _one_sample(make_state: Callable[[], S], run: Callable[[S], object], loops: int) -> tuple[float, float]:
    states = [make_state() for _ in range(loops)]
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        for state in states:
            run(state)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
    finally:
        if enabled:
            gc.enable()
    return wall, cpu


def best_of(make_state: Callable[[], S], run: Callable[[S], object], settings: Settings, estimate: float) -> Timing:
    """Time ``run(make_state())``; ``estimate`` is the seconds one run took untimed (calibration)."""
    loops = max(1, min(100_000, math.ceil(settings.min_sample / max(estimate, 1e-7))))
    best_wall = best_cpu = math.inf
    spent = 0.0
    samples = 0
    while samples < settings.repeats:
        wall, cpu = _one_sample(make_state, run, loops)
        samples += 1
        spent += wall
        best_wall = min(best_wall, wall / loops)
        best_cpu = min(best_cpu, cpu / loops)
        if samples >= 2 and spent >= settings.budget:
            break
    return Timing(best_wall, best_cpu, loops, samples)


def record(
    section: str, impl: str, kind: str, size: int, chunk: int | None, chars: int, chunks: int, timing: Timing
) -> dict:
    """One result row; also the shape the peer runners print."""
    return {
        "section": section,
        "impl": impl,
        "fixture": kind,
        "size": size,
        "chunk": chunk,
        "chars": chars,
        "chunks": chunks,
        "wall_s": timing.wall,
        "cpu_s": timing.cpu,
        "mb_per_s": chars / timing.wall / 1e6,
        "us_per_chunk": timing.wall / chunks * 1e6,
        "us_per_kb": timing.wall / (chars / 1000) * 1e6,
        "loops": timing.loops,
        "samples": timing.samples,
    }
