"""``python -m bench.ab BASE``: this checkout against another one, interleaved, in MB/s ratios.

Runs ``python -m bench --quick --json`` (or ``--tiny``) alternately in BASE (another checkout
of lmparse, e.g. ``git worktree add /tmp/base f152012``) and in this one, ``--rounds`` times
each, the order flipping every round; each process imports its own checkout's lmparse. For
every configuration (section, dialect, fixture, size, chunking) the best MB/s of each side is
kept, and the report gives this/BASE per configuration, per section and as one geometric
mean. Hash randomization is fixed (``PYTHONHASHSEED=0``) so both sides hash alike. Nothing
here asserts a number: a redesign's acceptance (e.g. geomean >= 0.97) is read off the report.

``python -m bench.ab --cores`` compares the two parser cores of this checkout instead: the
compiled one (``make compiled``) against the pure one (``LMPARSE_PURE=1``) as BASE.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
Key = tuple[str, str, str, int, str]


def _rows(run: dict) -> Iterator[tuple[Key, float]]:
    for x in run["results"] + run["dialects"]:
        if x.get("impl") == "lmparse" and x["mb_per_s"]:
            yield (x["section"], x.get("dialect", ""), x["fixture"], x["size"], str(x["chunk"])), x["mb_per_s"]
    for v in run["versus"]:
        if v["ours_mbs"]:
            yield ("versus", v["case"], v["chunking"], v["size"], ""), v["ours_mbs"]


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _run(where: Path, mode: str, out: Path, extra: dict[str, str]) -> float:
    env = {**{k: v for k, v in os.environ.items() if k != "LMPARSE_PURE"}, "PYTHONHASHSEED": "0", **extra}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "bench", f"--{mode}", "--json", str(out)], cwd=where, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def compare(base: Path | None, rounds: int, mode: str) -> dict[Key, float]:
    """This checkout's best MB/s over BASE's, per configuration (None: over its own pure core)."""
    best: dict[str, dict[Key, float]] = {"base": {}, "this": {}}
    sides = (("base", base or HERE, {} if base else {"LMPARSE_PURE": "1"}), ("this", HERE, {}))
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side, where, extra in sides if r % 2 == 0 else sides[::-1]:
                out = Path(tmp) / f"{side}-{r}.json"
                took = _run(where, mode, out, extra)
                print(f"round {r + 1}/{rounds}: {side} in {took:.0f} s", file=sys.stderr, flush=True)
                for key, mbs in _rows(json.loads(out.read_text())):
                    best[side][key] = max(best[side].get(key, 0.0), mbs)
    return {k: best["this"][k] / best["base"][k] for k in best["base"].keys() & best["this"].keys()}


def report(ratios: dict[Key, float], worst: int = 12) -> str:
    lines = [f"configurations {len(ratios)}; geomean this/base {_geomean(list(ratios.values())):.3f}; "
             f"min {min(ratios.values()):.3f}; max {max(ratios.values()):.3f}"]
    sections: dict[str, list[float]] = {}
    for key, ratio in ratios.items():
        sections.setdefault(key[0], []).append(ratio)
    lines += [f"  section {name:10} n={len(rs):3}  geomean {_geomean(rs):.3f}" for name, rs in sorted(sections.items())]
    lines.append("slowest:")
    slowest = sorted(ratios.items(), key=lambda kv: kv[1])[:worst]
    lines += [f"  {ratio:.3f}  {' '.join(map(str, key))}" for key, ratio in slowest]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, nargs="?", help="another checkout of lmparse (a git worktree)")
    parser.add_argument("--cores", action="store_true", help="no BASE: this checkout's compiled core over its pure one")
    parser.add_argument("--rounds", type=int, default=2, help="runs per side (default 2)")
    parser.add_argument("--tiny", action="store_true", help="2 KB fixtures: checks the driver, times nothing")
    parser.add_argument("--json", metavar="PATH", help="also write every ratio to PATH")
    args = parser.parse_args(argv)
    if args.cores == (args.base is not None):
        parser.error("give either BASE or --cores")
    if args.base is not None and not (args.base / "bench" / "__main__.py").is_file():
        parser.error(f"{args.base} is not a checkout of lmparse (no bench/__main__.py)")
    ratios = compare(args.base.resolve() if args.base else None, args.rounds, "tiny" if args.tiny else "quick")
    print(report(ratios))
    if args.json:
        Path(args.json).write_text(json.dumps({" | ".join(map(str, k)): r for k, r in sorted(ratios.items())},
                                              indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
