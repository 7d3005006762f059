"""``python -m reliability [--reduced] [--write docs/reliability.md] [--section NAME ...]``.

Runs load, disconnects, hostile and upstream against real ``lmparse serve`` subprocesses,
prints the summary table, optionally writes the report; exit status 1 if any row failed or
any request was lost."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

from . import disconnects, hostile, load, upstream
from .report import SectionRun, render, summary
from .rows import Row
from .server import Server

SECTIONS: dict[str, tuple[Callable[[str], list[Row]], str]] = {
    "load": (load.run, "Concurrent mixed requests: OpenAI chat, Anthropic messages and Responses, streaming and not, "
             "families qwen3, glm47, gpt-oss and kimi-k2 served together, replies that are plain text (with "
             "reasoning), one tool call and two tool calls. Each distinct request runs alone first; then all run at "
             "once and each answer must equal its solo answer (content, reasoning, calls with arguments, finish; "
             "ids and timestamps left out). Every request carries its own number, which its answer must show."),
    "disconnects": (disconnects.run, "Clients that leave: streaming ones close the socket after three events, "
                    "non-streaming ones once the server counts the request as started (the reply is still being "
                    "generated at 50 tokens per second), 100 at a time. `lmparse_engine_cancelled_total` and the "
                    "engines' own cancelled counters must rise by exactly the number of clients, "
                    "`lmparse_requests_in_flight` must return to 0, and RSS / fds / threads (from /proc) and the "
                    "event loop's tasks (`lmparse_event_loop_tasks`) are compared before and after; three "
                    "requests answered before must be answered the same after."),
    "hostile": (hostile.run, "One row per hostile input, each followed by a `/health` probe and a normal request that "
                "must be answered right. The server requires an API key (`--api-key-file`); every row but the key "
                "rows sends it. Error bodies must have the path's API shape: OpenAI `{\"error\": {\"message\", "
                "\"type\", \"param\", \"code\"}}` (a 400's `param` naming the field), Anthropic `{\"type\": "
                "\"error\", \"error\": {\"type\", \"message\"}}` (the message naming the field)."),
    "upstream": (upstream.run, "`lmparse serve --engine vllm` in front of a scripted vLLM (`POST /v1/completions`, "
                 "streaming, on a raw asyncio server in the harness) whose prompt names the fault. Faults before "
                 "the stream must be a 502/504 in the API's shape carrying neither the upstream URL nor the "
                 "upstream's error text (`SECRET-UPSTREAM-DETAIL`), except the engine's HTTP 400, which is the "
                 "client's 400 with the engine's reason (still no URL); faults mid-stream must end the stream with the "
                 "API's error event, never hang; a client leaving a stall must make lmparse close the upstream "
                 "connection; a slow reader must not make the server buffer the engine's output."),
}


def run(names: Sequence[str], size: str) -> list[SectionRun]:
    runs = []
    for name in names:
        fn, about = SECTIONS[name]
        first, start = len(Server.started), time.monotonic()
        rows = fn(size)
        runs.append(SectionRun(name, about, rows, Server.started[first:], time.monotonic() - start))
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reliability", description=__doc__)
    p.add_argument("--reduced", action="store_true", help="the small set `make test` runs")
    p.add_argument("--write", metavar="PATH", help="write the markdown report here")
    p.add_argument("--section", action="append", choices=list(SECTIONS), help="run only these (repeatable)")
    args = p.parse_args(argv)
    size = "reduced" if args.reduced else "full"
    runs = run(args.section or list(SECTIONS), size)
    print("\n".join(summary(runs)))
    for r in (r for run in runs for r in run.rows if not r.ok):
        print(f"FAILED {r.section}: {r.case}: {' '.join(r.observed.split())[:300]}")
    if args.write:
        command = "python -m reliability" + (" --reduced" if args.reduced else "") + f" --write {args.write}"
        with open(args.write, "w", encoding="utf-8") as fh:
            fh.write(render(runs, command, size))
    return 1 if any(not r.ok or r.lost for run in runs for r in run.rows) else 0


if __name__ == "__main__":
    sys.exit(main())
