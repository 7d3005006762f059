"""``python -m bench``: check, time and tabulate lmparse's streaming hot paths.

Sections: (1) the qwen parser stack at several chunk sizes, (2) JsonValueScanner
alone, (3) linearity from 10 KB to the full size, (4) a pass-through floor shown
beside (1), (5) peers, opt-in with ``--peers``.  Every configuration's output is
checked before it is timed; a wrong output aborts the run with exit status 1.
``--quick`` uses 100 KB fixtures, ``--json PATH`` also writes the numbers, and
``--profile`` adds a cProfile of the chunk-4 stack runs.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple, Sequence

from .fixtures import FIXTURE_KINDS, build_reply, chunk_label, split_chunks
from .peers import PeerRun, run_lmdeploy, vllm_hermes
from .report import fmt, render_run, size_label
from .timing import Settings
from .verify import ReconstructionError

ROOT = Path(__file__).resolve().parent.parent


class Mode(NamedTuple):
    name: str
    size: int  # characters of ARG in the main fixtures
    linearity_sizes: tuple[int, ...]
    settings: Settings


FULL = Mode("full", 1_000_000, (10_000, 100_000, 1_000_000), Settings(repeats=5, min_sample=0.2, budget=6.0))
QUICK = Mode("quick", 100_000, (10_000, 100_000), Settings(repeats=3, min_sample=0.03, budget=0.6))
STACK_CHUNKS: tuple[int | None, ...] = (1, 4, 16, 256, None)
SCANNER_CHUNKS: tuple[int | None, ...] = (1, 4, 8, 16, 256, None)
LINEARITY_CHUNKS: tuple[int | None, ...] = (16, None)
# The project's targets (see the issues); reported, never asserted.
TARGET_CHUNK4_LONG_MBS = 4.0
TARGET_WHOLE_SHORT_MBS = 60.0
TARGET_LINEARITY = 1.3


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _environment(mode: Mode) -> dict:
    rev = _git("rev-parse", "--short", "HEAD").strip()
    # lmparse may carry uncommitted edits: name them, since they are what was measured.
    dirty = [line[3:] for line in _git("status", "--porcelain", "--", "lmparse").splitlines()]
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import lmparse

    return {
        "mode": mode.name,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "lmparse": getattr(lmparse, "__version__", "?"),
        "git": rev,
        "lmparse_uncommitted": dirty,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "settings": mode.settings._asdict(),
    }


def _measure_ours(mode: Mode) -> list[dict]:
    from .ours import measure_passthrough, measure_scanner, measure_stack

    results: list[dict] = []
    replies = {kind: build_reply(kind, mode.size) for kind in FIXTURE_KINDS}
    for kind, reply in replies.items():
        for chunk in STACK_CHUNKS:
            _progress(f"  stack      {kind:13} {size_label(mode.size):>5} chunk {chunk_label(chunk)}")
            results.append(measure_stack(reply, mode.size, chunk, mode.settings))
            results.append(measure_passthrough(reply, mode.size, chunk, mode.settings))
    for kind, reply in replies.items():
        for chunk in SCANNER_CHUNKS:
            _progress(f"  scanner    {kind:13} {size_label(mode.size):>5} chunk {chunk_label(chunk)}")
            results.append(measure_scanner(reply, mode.size, chunk, mode.settings))
    for kind in FIXTURE_KINDS:
        for size in mode.linearity_sizes:
            if size == mode.size:
                continue  # the main table already has it
            reply = build_reply(kind, size)
            for chunk in LINEARITY_CHUNKS:
                _progress(f"  linearity  {kind:13} {size_label(size):>5} chunk {chunk_label(chunk)}")
                results.append(measure_stack(reply, size, chunk, mode.settings, section="linearity"))
    return results


def _run_peers(mode: Mode) -> list[PeerRun]:
    configs = [("stack", kind, mode.size, chunk) for kind in FIXTURE_KINDS for chunk in STACK_CHUNKS]
    configs += [
        ("linearity", kind, size, chunk)
        for kind in FIXTURE_KINDS
        for size in mode.linearity_sizes
        if size != mode.size
        for chunk in LINEARITY_CHUNKS
    ]
    _progress(f"  peer lmdeploy: {len(configs)} configurations in its own virtualenv")
    return [run_lmdeploy(configs, mode.settings, timeout=1800), vllm_hermes()]


def _find(results: list[dict], section: str, kind: str, size: int, chunk: int | None) -> dict | None:
    key = (section, kind, size, chunk)
    for r in results:
        if r["impl"] == "lmparse" and (r["section"], r["fixture"], r["size"], r["chunk"]) == key:
            return r
    return None


def _targets(results: list[dict], mode: Mode) -> tuple[str, list[dict]]:
    checks: list[dict] = []

    def add(label: str, value: float | None, goal: float, higher_is_better: bool, unit: str) -> None:
        ok = value is not None and (value >= goal if higher_is_better else value <= goal)
        checks.append({"target": label, "value": value, "goal": goal, "met": ok})
        sign = ">=" if higher_is_better else "<="
        lines.append(f"   {'MET ' if ok else 'MISS'}  {label}: {fmt(value, unit)} (goal {sign} {fmt(goal, unit)})")

    lines = [f"targets (measured on {size_label(mode.size)}-char fixtures)"]
    long4 = _find(results, "stack", "long-string", mode.size, 4)
    add("long-string chunk 4", long4 and long4["mb_per_s"], TARGET_CHUNK4_LONG_MBS, True, " MB/s")
    short_whole = _find(results, "stack", "short-strings", mode.size, None)
    add("short-strings whole", short_whole and short_whole["mb_per_s"], TARGET_WHOLE_SHORT_MBS, True, " MB/s")
    first, last = mode.linearity_sizes[0], mode.linearity_sizes[-1]
    for kind in FIXTURE_KINDS:
        for chunk in LINEARITY_CHUNKS:
            a = _find(results, "stack" if last == mode.size else "linearity", kind, last, chunk)
            b = _find(results, "linearity", kind, first, chunk)
            ratio = a["us_per_kb"] / b["us_per_kb"] if a and b else None
            add(f"us/KB {size_label(last)}/{size_label(first)} {kind} chunk {chunk_label(chunk)}", ratio,
                TARGET_LINEARITY, False, "x")
    return "\n".join(lines), checks


def _profile(mode: Mode, kind: str, top: int) -> str:
    """cProfile of the chunk-4 stack run on one fixture; top entries by own time, with per-call cost."""
    from .ours import make_qwen_parser

    reply = build_reply(kind, mode.size)
    chunks = split_chunks(reply.text, 4)
    body, last = chunks[:-1], chunks[-1]
    parser = make_qwen_parser()
    profiler = cProfile.Profile()
    profiler.enable()
    for piece in body:
        parser.stream_chunk(piece)
    parser.stream_chunk(last, final=True)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(entry[2] for entry in stats.values())
    rows = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    lines = [
        f"profile: qwen stack, {kind} {size_label(mode.size)}, chunk 4 ({len(chunks)} chunks), "
        f"cProfile total own time {total:.2f} s (profiler overhead inflates small functions)",
        f"   {'tottime s':>9} {'%':>5} {'calls':>9} {'us/call':>8} {'cumtime s':>9}  function",
    ]
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in rows:
        where = f"{'/'.join(Path(filename).parts[-2:])}:{line}({func})" if line else func
        share = 100 * tottime / total
        per_call = tottime / ncalls * 1e6
        lines.append(f"   {tottime:9.3f} {share:5.1f} {ncalls:9d} {per_call:8.3f} {cumtime:9.3f}  {where}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 KB fixtures and fewer repeats (< 60 s)")
    parser.add_argument("--json", metavar="PATH", help="also write every number to PATH as JSON")
    parser.add_argument("--peers", action="store_true", help="also run the peers (scripts/setup_bench_peers.sh)")
    parser.add_argument("--profile", action="store_true", help="also cProfile the chunk-4 stack runs")
    args = parser.parse_args(argv)
    mode = QUICK if args.quick else FULL

    started = time.perf_counter()
    env = _environment(mode)
    _progress(f"bench ({mode.name}): checking and timing ...")
    try:
        results = _measure_ours(mode)
    except ReconstructionError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    peers = _run_peers(mode) if args.peers else []
    profiles = [_profile(mode, kind, top=15) for kind in FIXTURE_KINDS] if args.profile else []
    elapsed = time.perf_counter() - started

    targets_text, targets = _targets(results, mode)
    dirty = env["lmparse_uncommitted"]
    print(
        f"lmparse bench ({mode.name}) - lmparse {env['lmparse']} @ {env['git'] or '?'}"
        f"{' + uncommitted ' + ', '.join(dirty) if dirty else ''}, "
        f"{env['implementation']} {env['python']}, {env['cpu'] or env['platform']}, {env['date']}"
    )
    s = mode.settings
    print(f"best of up to {s.repeats} samples (>= {s.min_sample * 1000:.0f} ms each), gc disabled while timing; "
          "output checked before timing\n")
    print(
        render_run(
            results,
            size=mode.size,
            kinds=FIXTURE_KINDS,
            stack_chunks=STACK_CHUNKS,
            scanner_chunks=SCANNER_CHUNKS,
            linearity_sizes=mode.linearity_sizes,
            linearity_chunks=LINEARITY_CHUNKS,
            peers=peers,
        )
    )
    print()
    print(targets_text)
    for profile in profiles:
        print()
        print(profile)
    print(f"\ntotal run time {elapsed:.1f} s")

    if args.json:
        payload = {
            "environment": env,
            "elapsed_s": elapsed,
            "results": results,
            "targets": targets,
            "profiles": profiles,
            "peers": [
                {"name": p.name, "impl": p.impl, "status": p.status, "results": p.records, "errors": p.errors}
                for p in peers
            ],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
