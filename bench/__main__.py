"""``python -m bench``: check, time and tabulate lmparse's streaming hot paths.

Sections: (1) the qwen parser stack at several chunk sizes, (2) JsonValueScanner
alone, (3) linearity from 10 KB to the full size, (4) a pass-through floor shown
beside (1), (5) how the peer ran, (6) every tool dialect on one call with a long
string argument and one with many typed arguments, (7) each dialect's linearity,
(8) same-run ratios against LMDeploy (``bench.versus``: the qwen stack, ``<think>``
reasoning and every dialect LMDeploy has, at N-character chunks, whole, complete,
one real token per chunk and groups of 2-16 tokens; the peer with ``--peers``);
``--dialects`` picks the groups of (6)-(8).  Every configuration's output is checked
before it is timed; a wrong output aborts the run with exit status 1.  ``--quick``
uses 100 KB fixtures, ``--tiny`` 2 KB ones (to keep the driver working), ``--json
PATH`` also writes the numbers, ``--write-docs`` writes docs/benchmarks.md's
``parsers`` sections and plot, and ``--profile`` adds a cProfile of the chunk-4 runs
(the qwen stack and each XML-like dialect's string argument).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from .fixtures import CALL_CONTENT, FIXTURE_KINDS, Call, build_call, build_reply, chunk_label, split_chunks
from .peers import PeerProcess
from .report import fmt, render_dialects, render_run, render_versus, size_label, versus_targets
from .timing import Settings
from .verify import ReconstructionError
from .versus import CHUNKINGS, VersusMode, dialect_cases, measure_cases, stack_cases

ROOT = Path(__file__).resolve().parent.parent
_T = TypeVar("_T")


class Mode(NamedTuple):
    name: str
    size: int  # characters of ARG in the main fixtures
    linearity_sizes: tuple[int, ...]
    settings: Settings
    # Dialects: the string argument's size, its size at chunk 1 (a 1 MB value fed one
    # character at a time takes seconds per run, times every dialect), the size its
    # linearity is compared with, and fewer samples than the stack (16 groups).
    call_size: int
    call_chunk1_size: int
    call_small: int
    dialect_settings: Settings
    versus: VersusMode  # section 8: the same-run ratios against the peer


# A pair's sample on one side: two runs at least (a best of two), more for small inputs.
_PAIR = Settings(repeats=2, min_sample=0.1, budget=0.3)


FULL = Mode(
    "full", 1_000_000, (10_000, 100_000, 1_000_000), Settings(repeats=5, min_sample=0.2, budget=6.0),
    1_000_000, 100_000, 10_000, Settings(repeats=3, min_sample=0.2, budget=1.5),
    VersusMode(1_000_000, 100_000, 100_000, 3, _PAIR),
)
QUICK = Mode(
    "quick", 100_000, (10_000, 100_000), Settings(repeats=3, min_sample=0.03, budget=0.6),
    100_000, 100_000, 10_000, Settings(repeats=3, min_sample=0.03, budget=0.3),
    VersusMode(100_000, 10_000, 100_000, 3, _PAIR),
)
# Keeps the driver working under `make test`: every output checked, timings meaningless.
_ONCE = Settings(repeats=1, min_sample=0.0, budget=0.0)
TINY = Mode("tiny", 2_000, (1_000, 2_000), _ONCE, 2_000, 2_000, 1_000, _ONCE, VersusMode(2_000, 200, 2_000, 1, _ONCE))
STACK_CHUNKS: tuple[int | None, ...] = (1, 4, 16, 256, None)
SCANNER_CHUNKS: tuple[int | None, ...] = (1, 4, 8, 16, 256, None)
LINEARITY_CHUNKS: tuple[int | None, ...] = (16, None)
DIALECT_CHUNKS: tuple[int | None, ...] = (1, 4, 16, 256, None)
TYPED_ARGS = 1000
# The project's targets (see the issues); reported, never asserted.
TARGET_CHUNK4_LONG_MBS = 4.0
TARGET_WHOLE_SHORT_MBS = 60.0
TARGET_LINEARITY = 1.3
TARGET_XML_CHUNK4_MBS = 3.0  # every XML-like dialect (DSML too) on the long string argument


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


def _dialect_plan(mode: Mode) -> list[tuple[str, str, int, int | None]]:
    """``(section, kind, size, chunk)`` that every dialect runs."""
    plan = [
        ("dialect", "string-arg", mode.call_chunk1_size if chunk == 1 else mode.call_size, chunk)
        for chunk in DIALECT_CHUNKS
    ]
    plan += [("dialect", "typed-args", TYPED_ARGS, chunk) for chunk in DIALECT_CHUNKS]
    plan += [("linearity", "string-arg", mode.call_small, chunk) for chunk in LINEARITY_CHUNKS]
    return plan


def _calls(plan: list[tuple[str, str, int, int | None]]) -> dict[tuple[str, int], Call]:
    return {(kind, size): build_call(kind, size) for _section, kind, size, _chunk in plan}


def _measure_dialects(mode: Mode, dialects: list, plan: list, calls: dict) -> list[dict]:
    from .dialects import call_reply
    from .ours import measure_call

    results: list[dict] = []
    for dialect in dialects:
        replies = {key: call_reply(dialect, call) for key, call in calls.items()}
        for section, kind, size, chunk in plan:
            _progress(f"  {section:10} {dialect.label:13} {kind:11} {size_label(size):>5} chunk {chunk_label(chunk)}")
            results.append(
                measure_call(dialect.make_parser, replies[(kind, size)], chunk, mode.dialect_settings, section)
            )
    return results


def _measure_versus(mode: Mode, dialects: list, with_peer: bool) -> tuple[list[dict], str | None, str | None]:
    """Section 8: its rows, the peer that ran (name and version) and, if none did, why."""
    if not with_peer:
        cases = stack_cases() + dialect_cases(dialects, None)
        return measure_cases(cases, mode.versus, None, CHUNKINGS, _progress), None, "not run (--peers)"
    with PeerProcess() as peer:
        answer = peer.request(op="names")
        if not answer["ok"]:
            return [], None, f"unavailable ({peer.unavailable or answer['error']})"
        cases = stack_cases() + dialect_cases(dialects, answer["names"])
        _progress(f"  peer {answer['impl']}: {len(cases)} cases, interleaved with ours")
        return measure_cases(cases, mode.versus, peer, CHUNKINGS, _progress), answer["impl"], None


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


def _dialect_targets(rows: list[dict], mode: Mode, dialects: list) -> tuple[str, list[dict]]:
    index = {(r["dialect"], r["section"], r["fixture"], r["size"], r["chunk"]): r for r in rows}
    checks: list[dict] = []
    lines = [f"dialect targets (string-arg {size_label(mode.call_size)} chars)"]

    def add(label: str, value: float | None, goal: float, higher_is_better: bool, unit: str) -> None:
        ok = value is not None and (value >= goal if higher_is_better else value <= goal)
        checks.append({"target": label, "value": value, "goal": goal, "met": ok})
        sign = ">=" if higher_is_better else "<="
        lines.append(f"   {'MET ' if ok else 'MISS'}  {label}: {fmt(value, unit)} (goal {sign} {fmt(goal, unit)})")

    for dialect in dialects:
        if dialect.xml_like:
            row = index.get((dialect.label, "dialect", "string-arg", mode.call_size, 4))
            add(f"{dialect.label} string-arg chunk 4", row and row["mb_per_s"], TARGET_XML_CHUNK4_MBS, True, " MB/s")
    for dialect in dialects:
        for chunk in LINEARITY_CHUNKS:
            a = index.get((dialect.label, "dialect", "string-arg", mode.call_size, chunk))
            b = index.get((dialect.label, "linearity", "string-arg", mode.call_small, chunk))
            ratio = a["us_per_kb"] / b["us_per_kb"] if a and b else None
            add(f"{dialect.label} us/KB {size_label(mode.call_size)}/{size_label(mode.call_small)} chunk "
                f"{chunk_label(chunk)}", ratio, TARGET_LINEARITY, False, "x")
    return "\n".join(lines), checks


def _profile(title: str, make_parser, text: str, top: int) -> str:
    """cProfile of one chunk-4 run; top entries by own time, with per-call cost."""
    chunks = split_chunks(text, 4)
    body, last = chunks[:-1], chunks[-1]
    parser = make_parser()
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
        f"profile: {title}, chunk 4 ({len(chunks)} chunks), "
        f"cProfile total own time {total:.2f} s (profiler overhead inflates small functions)",
        f"   {'tottime s':>9} {'%':>5} {'calls':>9} {'us/call':>8} {'cumtime s':>9}  function",
    ]
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in rows:
        where = f"{'/'.join(Path(filename).parts[-2:])}:{line}({func})" if line else func
        share = 100 * tottime / total
        per_call = tottime / ncalls * 1e6
        lines.append(f"   {tottime:9.3f} {share:5.1f} {ncalls:9d} {per_call:8.3f} {cumtime:9.3f}  {where}")
    return "\n".join(lines)


def _profiles(mode: Mode, dialects: list, calls: dict) -> list[str]:
    from .dialects import call_reply
    from .ours import make_qwen_parser

    profiles = [
        _profile(f"qwen stack, {kind} {size_label(mode.size)}", make_qwen_parser, build_reply(kind, mode.size).text, 15)
        for kind in FIXTURE_KINDS
    ]
    for dialect in dialects:
        if dialect.xml_like:
            reply = call_reply(dialect, calls[("string-arg", mode.call_size)])
            make_parser = functools.partial(dialect.make_parser, {"tools": reply.tools})
            profiles.append(_profile(f"{dialect.label}, string-arg {size_label(mode.call_size)}", make_parser,
                                     reply.text, 12))
    return profiles


def _render_dialects(mode: Mode, dialects: list, plan: list, calls: dict, rows: list[dict]) -> str:
    typed = calls[("typed-args", TYPED_ARGS)]
    long_call = calls[("string-arg", mode.call_size)]
    chunk1 = (f"; chunk 1 on a {size_label(mode.call_chunk1_size)}-char value (a {size_label(mode.call_size)} value "
              "one character at a time, for every dialect, would take minutes)"
              if mode.call_chunk1_size != mode.call_size else "")
    header = [
        "6. tool dialects: create_parser(tool_parser=D, reasoning_parser=None, request with the call's schema); "
        f"reply = D.render_content({CALL_CONTENT!r}) + D.render([call]) (content bare except Muse's to=user "
        "message; a bare block wrapped in D's open tag); "
        "gpt-oss = create_parser(response_parser='gpt-oss') on text (a commentary preamble, then the call; "
        "LMDeploy's gpt-oss parser reads token ids only, so it has no peer here)",
        f"   string-arg: {long_call.name}(content=~{size_label(mode.call_size)} chars of prose with quotes, newlines, "
        f"tabs, backslashes, some '<'){chunk1}",
        f"   typed-args: {typed.name}() with {TYPED_ARGS} short arguments cycling string, integer, number, boolean, "
        f"array, each typed by the schema ({len(typed.arguments) // 1000}K chars of arguments JSON)",
        "   checked before timing: one call, its name, arguments equal as JSON (verbatim when the wire carries the "
        "JSON), the content, no reasoning",
    ]
    return render_dialects(
        rows,
        dialects=[(d.label, d.names) for d in dialects],
        plan=plan,
        linearity=(mode.call_small, mode.call_size),
        header=header,
    )


class _Run(NamedTuple):
    """What one run measured: the report's and the JSON file's input."""
    env: dict
    plan: list[tuple[str, str, int, int | None]]
    calls: dict
    results: list[dict]
    dialect_rows: list[dict]
    versus: list[dict]
    peer: str | None  # the peer of section 8, name and version, when it ran
    peer_status: str | None  # why it did not
    profiles: list[str]
    phases: dict[str, float]
    elapsed: float


def _parse_arguments(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list]:
    """The command line and the dialect groups it selects (an unknown name exits with usage)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 KB fixtures and fewer repeats")
    parser.add_argument("--tiny", action="store_true",
                        help="2 KB fixtures, one sample each: checks every output, times nothing worth reading")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the report into docs/benchmarks.md (sections parsers, parsers-detail) and its plot")
    parser.add_argument("--json", metavar="PATH", help="also write every number to PATH as JSON")
    parser.add_argument("--peers", action="store_true", help="also run the peers (scripts/setup_bench_peers.sh)")
    parser.add_argument("--profile", action="store_true",
                        help="also cProfile the chunk-4 runs (qwen stack, each XML-like dialect's string argument)")
    parser.add_argument("--dialects", default="all", metavar="NAMES",
                        help="tool dialect groups for sections 6-7: all (default), none, or comma-separated names "
                             "(any registered alias, or gpt-oss)")
    args = parser.parse_args(argv)
    from .dialects import select_dialects

    try:
        dialects = select_dialects(args.dialects)
    except ValueError as exc:
        parser.error(str(exc))
    return args, dialects


def _run(mode: Mode, dialects: list, with_peers: bool, with_profiles: bool) -> _Run | None:
    """Check and time everything asked for, each phase timed (None: a parser's output was wrong)."""
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def phase(name: str, run: Callable[[], _T]) -> _T:
        begun = time.perf_counter()
        value = run()
        phases[name] = time.perf_counter() - begun
        return value

    env = _environment(mode)
    plan = _dialect_plan(mode)
    calls = phase("fixtures", lambda: _calls(plan) if dialects else {})
    _progress(f"bench ({mode.name}): checking and timing ...")
    try:
        results = phase("qwen stack", lambda: _measure_ours(mode))
        dialect_rows = phase("dialects", lambda: _measure_dialects(mode, dialects, plan, calls))
        versus, peer, peer_status = phase("versus", lambda: _measure_versus(mode, dialects, with_peers))
    except ReconstructionError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return None
    profiles = phase("profiles", lambda: _profiles(mode, dialects, calls)) if with_profiles else []
    elapsed = time.perf_counter() - started
    return _Run(env, plan, calls, results, dialect_rows, versus, peer, peer_status, profiles, phases, elapsed)


def _report(mode: Mode, dialects: list, run: _Run, targets_texts: list[str]) -> tuple[str, str]:
    """The whole report, and its section 8 (the ratios) on its own."""
    env = run.env
    dirty = env["lmparse_uncommitted"]
    s = mode.settings
    head = [
        f"lmparse bench ({mode.name}) - lmparse {env['lmparse']} @ {env['git'] or '?'}"
        f"{' + uncommitted ' + ', '.join(dirty) if dirty else ''}, "
        f"{env['implementation']} {env['python']}, {env['cpu'] or env['platform']}, {env['date']}",
        f"best of up to {s.repeats} samples (>= {s.min_sample * 1000:.0f} ms each), gc disabled while timing; "
        "output checked before timing", "",
        render_run(run.results, size=mode.size, kinds=FIXTURE_KINDS, stack_chunks=STACK_CHUNKS,
                   scanner_chunks=SCANNER_CHUNKS, linearity_sizes=mode.linearity_sizes,
                   linearity_chunks=LINEARITY_CHUNKS),
    ]
    if dialects:
        head += ["", _render_dialects(mode, dialects, run.plan, run.calls, run.dialect_rows)]
    versus = render_versus(run.versus, CHUNKINGS, run.peer)
    if run.peer_status:
        versus += f"\n   peer: {run.peer_status}"
    parts = [*head, "", versus]
    for text in [*targets_texts, *run.profiles]:
        parts += ["", text]
    spent = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in run.phases.items())
    parts.append(f"\ntotal run time {run.elapsed:.1f} s ({spent})")
    return "\n".join(parts), "\n".join([head[0], "", versus])


def _write_docs(mode: Mode, run: _Run, report: str, versus: str, argv: Sequence[str]) -> None:
    """docs/benchmarks.md sections ``parsers`` (the ratios and their plot) and ``parsers-detail``."""
    from .page import IMAGES, write_section
    from .plots import plot_versus

    command = "python -m bench " + " ".join(argv)
    plot = plot_versus(run.versus, CHUNKINGS, run.peer, IMAGES / "parsers-mbps.png")
    beside = f"lmparse beside {run.peer}" if run.peer else "lmparse alone (no peer ran)"
    figure = f"\n![MB/s against chunking, {beside}](img/benchmarks/{plot.name})\n" if plot else ""
    how = "; one run alternates our timings and the peer's, configuration by configuration" if run.peer else ""
    intro = (f"## Parsers: {beside}\n\nWritten by `{command.strip()}` ({mode.name} mode; `make bench` runs "
             f"`python -m bench --peers --write-docs`){how}. "
             "Every output is checked before it is timed.\n")
    write_section("parsers", f"{intro}{figure}\n```text\n{versus}\n```")
    write_section("parsers-detail", f"## Parsers in detail\n\n`{command.strip()}`\n\n```text\n{report}\n```")


def _write_json(path: str, run: _Run, targets: list[dict]) -> None:
    payload = {
        "environment": run.env,
        "elapsed_s": run.elapsed,
        "phases_s": run.phases,
        "results": run.results,
        "targets": targets,
        "profiles": run.profiles,
        "dialects": run.dialect_rows,
        "versus": run.versus,
        "peer": run.peer,
        "peer_status": run.peer_status,
    }
    Path(path).write_text(json.dumps(payload, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args, dialects = _parse_arguments(argv)
    mode = TINY if args.tiny else QUICK if args.quick else FULL
    run = _run(mode, dialects, args.peers, args.profile)
    if run is None:
        return 1
    targets_text, targets = _targets(run.results, mode)
    dialect_targets_text, dialect_targets = _dialect_targets(run.dialect_rows, mode, dialects)
    targets += versus_targets(run.versus)
    report, versus = _report(mode, dialects, run, [targets_text, dialect_targets_text] if dialects else [targets_text])
    print(report)
    if args.json:
        _write_json(args.json, run, targets + dialect_targets)
    if args.write_docs:
        _write_docs(mode, run, report, versus, list(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
