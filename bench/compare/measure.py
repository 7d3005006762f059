"""Check, then time, one implementation on one case (peer side: standard library only).

An adapter wraps one implementation's parsers behind five calls:

- ``impl`` — its name and version, e.g. ``"vllm 0.33.0"``;
- ``new_state(case, parsers)`` — a fresh parser (or parser pair) for one stream;
- ``prepare(case, pieces)`` — the stream's input as the implementation receives it
  (the text pieces, with token ids for vLLM); built before any clock starts;
- ``stream(state, fed)`` — every delta of the stream, in OpenAI's attribute shape, to check;
- ``feed(state, fed)`` — the same work with the deltas dropped, as a server sends them: timed;
- ``complete(state, case)`` — the non-streaming parse, as one delta-shaped result;
- optionally ``time_runs(state, case, fed, min_sample)`` — an implementation outside Python
  (SMG's Rust crate) times its own runs, ``fed`` None for the non-streaming parse: an
  interpreter loop around a compiled parser would time the interpreter.

``Bench`` runs the same steps for lmparse in this process and for a peer in its worker.
"""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable

from ..timing import Settings, best_of
from .cases import COMPLETE, Case, Chunking, check_deltas, chunks_for

__all__ = ["Bench"]


class _Prepared:
    __slots__ = ("case", "parsers", "fed", "chunking")

    def __init__(self, case: Case, parsers: dict, fed: Any, chunking: str) -> None:
        self.case, self.parsers, self.fed, self.chunking = case, parsers, fed, chunking


class Bench:
    """Cases by key; per (key, chunk) the input that passed the check, reused by every timing."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.cases: dict[str, tuple[Case, dict]] = {}
        self.ready: dict[tuple[str, Chunking], _Prepared] = {}

    def load(self, key: str, case: Case, parsers: dict) -> None:
        self.cases[key] = (case, parsers)
        self.ready = {k: v for k, v in self.ready.items() if k[0] != key}

    def _chunkings(self, case: Case, chunk: Chunking) -> list[tuple[str, Callable[[], list[str]]]]:
        """Plain character cuts, then (if those give a wrong result) cuts that keep every marker
        whole, then, for an adapter that has ``align``, cuts moved to token ends (what its engine sends)."""
        ways = [("chars", lambda: chunks_for(case, chunk, False))]
        if case.markers:
            ways.append(("markers whole", lambda: chunks_for(case, chunk, True)))
        align = getattr(self.adapter, "align", None)
        if align is not None:
            ways.append(("tokens whole", lambda: align(case, chunks_for(case, chunk, True))))
        return ways

    def _check(self, case: Case, parsers: dict, chunk: Chunking) -> tuple[str | None, Any, str, str | None]:
        """(error, fed, the chunking that passed, what plain character cuts gave when another one passed)."""
        adapter = self.adapter
        if chunk == COMPLETE:
            error = check_deltas(adapter.complete(adapter.new_state(case, parsers), case), case)
            return error, None, "chars", None
        errors = []
        for name, pieces in self._chunkings(case, chunk):
            fed = adapter.prepare(case, pieces())
            error = check_deltas(adapter.stream(adapter.new_state(case, parsers), fed), case)
            if error is None:
                return None, fed, name, errors[0] if errors else None
            errors.append(error if not errors else f"{name}: {error}")
        return " (and with ".join(errors) + ")" * (len(errors) - 1), None, "", None

    def check(self, key: str, chunk: Chunking) -> dict:
        """``status``: ok, wrong (with ``error``) or error (the implementation raised); an ok on
        cuts other than plain characters carries what the plain cuts gave as ``chars_error``."""
        case, parsers = self.cases[key]
        self.ready = {}  # one configuration at a time: a chunk-1 stream of 1 MB is large
        started = time.perf_counter()
        try:
            error, fed, chunking, chars_error = self._check(case, parsers, chunk)
        except Exception as exc:  # a peer's crash is a finding, not the end of the run
            return {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500],
                    "seconds": time.perf_counter() - started}
        seconds = time.perf_counter() - started
        if error:
            return {"status": "wrong", "error": error[:700], "seconds": seconds}
        self.ready[(key, chunk)] = _Prepared(case, parsers, fed, chunking)
        answer = {"status": "ok", "chunking": chunking, "seconds": seconds}
        if chars_error:
            answer["chars_error"] = chars_error[:700]
        return answer

    def time(self, key: str, chunk: Chunking, min_sample: float, estimate: float) -> dict:
        """One sample: as many fresh runs back to back as fill ``min_sample`` seconds."""
        prepared = self.ready[(key, chunk)]
        adapter = self.adapter
        time_runs = getattr(adapter, "time_runs", None)
        if time_runs is not None:
            state = adapter.new_state(prepared.case, prepared.parsers)
            answer: dict = time_runs(state, prepared.case, None if chunk == COMPLETE else prepared.fed, min_sample)
            return answer
        run: Callable[[Any], object]
        if chunk == COMPLETE:
            run = lambda state: adapter.complete(state, prepared.case)  # noqa: E731
        else:
            run = lambda state: adapter.feed(state, prepared.fed)  # noqa: E731
        timing = best_of(lambda: adapter.new_state(prepared.case, prepared.parsers), run,
                         Settings(repeats=1, min_sample=min_sample, budget=0.0), estimate)
        return {"wall": timing.wall, "cpu": timing.cpu, "loops": timing.loops}

    def handle(self, request: dict) -> dict:
        """One request of the worker protocol (see ``bench.compare.worker``)."""
        op = request["op"]
        if op == "hello":
            return {"impl": self.adapter.impl}
        if op == "load":
            self.load(request["key"], Case(**request["case"]), request["parsers"])
            return {"loaded": request["key"]}
        if op == "check":
            return self.check(request["key"], request["chunk"])
        if op == "time":
            return self.time(request["key"], request["chunk"], request["min_sample"], request["estimate"])
        raise ValueError(f"unknown op {op!r}; choose hello, load, check or time")
