"""``python -m bench.compare.worker PEER``: one peer's parsers behind a line protocol (peer side).

Started by the driver with the peer virtualenv's interpreter (SMG's: this checkout's, which
drives the Rust binary).  Each stdin line is one
JSON request (``hello``, ``load`` a case, ``check`` or ``time`` one chunking, see
``Bench.handle``); each answer is one JSON line on the original stdout.  Anything the
peer prints goes to stderr, so it cannot break the protocol.  A request that raises
answers ``{"status": "error", ...}``; the driver kills a worker that runs too long.
"""

from __future__ import annotations

import importlib
import json
import sys

from .measure import Bench

PEERS = ("vllm", "sglang", "lmdeploy", "smg", "pure")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in PEERS:
        print(f"usage: python -m bench.compare.worker {{{','.join(PEERS)}}}", file=sys.stderr)
        return 2
    out = sys.stdout
    sys.stdout = sys.stderr
    try:
        adapter = importlib.import_module(f"bench.compare.peer_{argv[0]}").Adapter()
    except Exception as exc:
        out.write(json.dumps({"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500]}) + "\n")
        out.flush()
        return 1
    bench = Bench(adapter)
    for line in sys.stdin:
        try:
            answer = bench.handle(json.loads(line))
        except Exception as exc:
            answer = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
