"""``python -m bench.compare``: check and time lmparse beside vLLM's, SGLang's, LMDeploy's and SMG's parsers.

Formats every side registers (``bench.compare.formats``), one call with a long string
argument (or a long reasoning) of 10 KB / 100 KB / 1 MB, chunks of 1, 4, 16, 256
characters, the whole reply in one chunk, and the non-streaming parse.  Output is
checked before it is timed; ratios are medians of interleaved pairs.  ``--write-docs``
writes the ``summary`` and ``peers`` sections of docs/benchmarks.md and the plots
under docs/img/benchmarks/; ``--json`` keeps every row.  ``--quick``: every format at 10 KB and
100 KB, chunks 16, whole and complete.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lmparse._core import core

from ..page import IMAGES, PAGE
from .cases import COMPLETE, Chunking
from .client import Worker, peer_python, unavailable
from .formats import PEERS, select_formats
from .machine import machine
from .measure import Bench
from .ours import Adapter
from .run import Plan, run

FULL_SIZES = [10_000, 100_000, 1_000_000]
FULL_CHUNKS: list[Chunking] = [1, 4, 16, 256, None, COMPLETE]
QUICK_SIZES = [10_000, 100_000]
QUICK_CHUNKS: list[Chunking] = [16, None, COMPLETE]


def _chunks(spec: str) -> list[Chunking]:
    out: list[Chunking] = []
    for item in spec.split(","):
        item = item.strip()
        out.append(None if item == "whole" else COMPLETE if item == COMPLETE else int(item))
    return out


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 KB and 100 KB, chunks 16, whole and complete")
    parser.add_argument("--sizes", help="comma-separated argument sizes in characters (default 10000,100000,1000000)")
    parser.add_argument("--chunks", help="comma-separated chunk sizes, 'whole' and 'complete' (default all)")
    parser.add_argument("--formats", default="all", help="all, or comma-separated format labels")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers, or none")
    parser.add_argument("--pairs", type=int, default=3, help="interleaved lmparse/peer timing pairs (default 3)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds a peer may run one configuration")
    parser.add_argument("--min-sample", type=float, default=0.1, help="seconds one timing sample lasts at least")
    parser.add_argument("--json", metavar="PATH", help="also write every row to PATH")
    parser.add_argument("--from-json", metavar="PATH", help="measure nothing: report the rows --json wrote")
    parser.add_argument("--write-docs", action="store_true", help="write docs/benchmarks.md sections and the plots")
    parser.add_argument("--section", metavar="NAME",
                        help="with --write-docs: a partial run into section NAME alone (plots NAME-*.png)")
    parser.add_argument("--title", help="with --section: the section's heading (default: its formats and peers)")
    parser.add_argument("--page", type=Path, default=PAGE, help=argparse.SUPPRESS)
    parser.add_argument("--images", type=Path, default=IMAGES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.formats = select_formats(args.formats)
        args.peers = [] if args.peers.strip() == "none" else [p.strip() for p in args.peers.split(",")]
        unknown = [p for p in args.peers if p not in PEERS]
        if unknown:
            raise ValueError(f"unknown peer {', '.join(unknown)}; choose none or from: {', '.join(PEERS)}")
        args.sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
            QUICK_SIZES if args.quick else FULL_SIZES)
        args.chunks = _chunks(args.chunks) if args.chunks else (QUICK_CHUNKS if args.quick else FULL_CHUNKS)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def _workers(peers: list[str]) -> tuple[list[Worker], dict[str, str]]:
    """Workers for the peers whose interpreter exists; the others with the reason."""
    workers, missing = [], {}
    for peer in peers:
        reason = unavailable(peer)
        if reason is None:
            workers.append(Worker(peer, peer_python(peer)))
        else:
            missing[peer] = reason
    return workers, missing


def _tokenizers() -> Path | None:
    from lmparse.serve.tokenizer import testdata_dir

    return testdata_dir()


def _measure(args: argparse.Namespace, argv: Sequence[str] | None) -> dict:
    started = time.perf_counter()
    workers, missing = _workers(args.peers)
    plan = Plan(args.formats, args.sizes, args.chunks, args.pairs, args.limit, args.min_sample, _tokenizers())
    try:
        rows = run(plan, Bench(Adapter()), workers)
    finally:
        for worker in workers:
            worker.stop()
    impls = {w.peer: w.impl for w in workers if w.impl}
    result = {"machine": machine(), "plan": {"sizes": plan.sizes, "chunks": plan.chunks, "pairs": plan.pairs,
                                             "limit_s": plan.limit, "min_sample_s": plan.min_sample},
              "command": "python -m bench.compare " + shlex.join(sys.argv[1:] if argv is None else argv),
              "impls": impls, "core": core(), "missing": missing, "rows": rows,
              "elapsed_s": time.perf_counter() - started}
    if args.json:  # first: the numbers survive whatever happens to the report
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    if args.from_json:
        result = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
    else:
        result = _measure(args, argv)
    rows = result["rows"]
    from .report import render_console, write_docs

    print(render_console(result))
    if args.write_docs:
        write_docs(result, args.page, args.images, args.section, args.title)
    wrong_ours = [r for r in rows if r["peer"] == "lmparse" and r["status"] != "ok"]
    return 1 if wrong_ours else 0


if __name__ == "__main__":
    sys.exit(main())
