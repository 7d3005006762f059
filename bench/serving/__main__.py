"""``python -m bench.serving``: lmparse's serving path, measured three ways, written to the
``serving`` section of docs/benchmarks.md (``make bench-serving``).

1. In process (``inprocess``): CPU µs per streamed token per API.
2. Loopback load (``load``): tokens/s at each client count, lmparse serve beside bare Starlette.
3. Peers (``peer_runner``): vLLM's and SGLang's chat serving layers on the same token stream.

The tracked page and its plot are written only with ``--write-docs`` (``make bench-serving``);
without it the section is printed and nothing in the checkout changes.  ``--tiny`` runs a few
tokens, few clients and one pair (``make test`` keeps the driver working with it); ``--page PATH``
writes the section into another page (its plot beside it, under ``img/``), ``--json PATH`` also
writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..page import IMAGES, PAGE, write_section
from . import inprocess, load, peer_runner, peers, report, stream

__all__ = ["main"]


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.serving")
    p.add_argument("--tiny", action="store_true", help="a few tokens and clients: checks the driver, not speed")
    p.add_argument("--words", type=int, help="words in each part of the reply (default 300)")
    p.add_argument("--clients", type=int, nargs="+", help="client counts of the load test (default 64 256)")
    p.add_argument("--seconds", type=float, help="seconds of load per run (default 5)")
    p.add_argument("--pairs", type=int, help="lmparse / bare pairs per client count (default 3)")
    p.add_argument("--no-peers", action="store_true", help="skip vLLM and SGLang")
    p.add_argument("--write-docs", action="store_true",
                   help="write the serving section of docs/benchmarks.md and its plot (default: print only)")
    p.add_argument("--page", type=Path, help="write the section into this page instead (its plot under img/ beside it)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    tiny = args.tiny
    args.words = args.words or (3 if tiny else 300)
    args.clients = args.clients or ([2, 4] if tiny else [64, 256])
    args.seconds = args.seconds or (0.5 if tiny else 5.0)
    args.pairs = args.pairs or (1 if tiny else 3)
    args.repeats = 2 if tiny else 7
    args.repeat = 2 if tiny else 160  # the load request's echo count
    return args


def run(args: argparse.Namespace) -> dict:
    tokenizer, steps = stream.token_stream(args.words)
    results: dict = {"stream": {"tokenizer": tokenizer, "tokens": len(steps)}, "machine": report.machine()}
    print(f"in process: {len(steps)} tokens x {args.repeats} runs per API", file=sys.stderr)
    results["in_process"] = inprocess.measure(steps, args.repeats)
    sse = inprocess.run_once(inprocess.binding(steps), "chat.completions")[2]
    results["reply"] = peer_runner.fold_sse([sse.decode()], "reasoning_content")
    print(f"loopback load: {args.clients} clients, {args.pairs} pairs of {args.seconds:g} s", file=sys.stderr)
    results["load"] = load.measure(args.clients, args.seconds, args.pairs, args.repeat)
    results["peers"] = {}
    if not args.no_peers:
        payload = stream.peer_payload(steps, args.repeats)
        for peer in peers.PEERS:
            print(f"peer {peer}", file=sys.stderr)
            results["peers"][peer] = peers.run_peer(peer, payload, timeout=240.0)
    return results


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    page: Path | None = args.page if args.page is not None else PAGE if args.write_docs else None
    results = run(args)
    image = None
    if page is not None:
        image_path = (IMAGES if page == PAGE else page.parent / "img") / "serving-concurrency.png"
        if report.plot(results["load"], image_path):
            image = str(image_path.relative_to(page.parent)) if image_path.is_relative_to(page.parent) \
                else str(image_path)
    command = "python -m bench.serving" + (" --tiny" if args.tiny else "") + (" --write-docs" if page == PAGE else "")
    markdown = report.render(results, ["make bench-serving", command], image)
    if page is not None:
        write_section("serving", markdown, page)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
