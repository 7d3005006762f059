"""The ``serving`` section of docs/benchmarks.md, and its plot."""

from __future__ import annotations

import json
import os
import platform
import re
from importlib import metadata
from pathlib import Path

__all__ = ["machine", "render", "plot"]

IN_PROCESS_TARGET = 8.0  # µs per token, each API
LOAD_TARGET = 0.60  # of the bare endpoint's tokens/s
PEER_TARGET = 0.5  # lmparse's CPU per token ÷ the peer's


def machine() -> str:
    info = Path("/proc/cpuinfo")
    found = re.search(r"^model name\s*:\s*(.+)$", info.read_text(), re.M) if info.exists() else None
    cpu = found.group(1).strip() if found else platform.processor() or "?"
    versions = ", ".join(f"{name} {_version(name)}" for name in ("uvicorn", "starlette", "h11", "orjson"))
    return (f"{platform.system()} {platform.machine()}, {cpu}, {len(_cpus())} CPUs usable; "
            f"Python {platform.python_version()}; {versions}")


def _cpus() -> set[int]:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _holds(ok: bool) -> str:
    return "holds" if ok else "**misses**"


def _in_process(inproc: dict) -> list[str]:
    rows = ["| API | tokens | SSE bytes | CPU µs / token | target ≤ 8 µs |", "|---|---:|---:|---:|---|"]
    for api, r in inproc.items():
        rows.append(f"| {api} | {r['tokens']} | {r['bytes']} | {r['us_per_token']:.2f} | "
                    f"{_holds(r['us_per_token'] <= IN_PROCESS_TARGET)} |")
    return rows


def _load(load: dict) -> list[str]:
    rows = ["| clients | lmparse tokens/s | bare Starlette tokens/s | lmparse ÷ bare (median of pairs) | "
            "server CPU µs / token (lmparse, bare) | bare ÷ lmparse CPU per token | client CPU share | "
            "target ≥ 60 % |",
            "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n, r in load["runs"].items():
        per = {name: _per_token(runs) for name, runs in r["detail"].items()}
        client = max(run["client_cpu"] / run["seconds"] for runs in r["detail"].values() for run in runs)
        rows.append(f"| {n} | {r['lmparse']:,.0f} | {r['bare']:,.0f} | {r['ratio']:.0%} | "
                    f"{per['lmparse']:.1f}, {per['bare']:.1f} | {per['bare'] / per['lmparse']:.0%} | ≤ {client:.0%} | "
                    f"{_holds(r['ratio'] >= LOAD_TARGET)} |")
    return rows


def _per_token(runs: list[dict]) -> float:
    events = sum(run["events"] for run in runs)
    return sum(run["server_cpu"] for run in runs) / events * 1e6 if events else float("nan")


def _same_reply(theirs: dict, ours: dict) -> bool:
    """The same content, reasoning and calls (whitespace around the texts aside)."""
    def key(reply: dict) -> tuple:
        calls = []
        for name, arguments in reply["calls"]:
            try:
                calls.append((name, json.loads(arguments)))
            except ValueError:
                calls.append((name, arguments))
        return reply["content"].strip(), reply["reasoning"].strip(), calls

    return key(theirs) == key(ours)


def _peers(peers: dict, ours: float, reply: dict) -> list[str]:
    rows = ["| serving layer | parsers | CPU µs / token | lmparse ÷ peer | same reply | target ≤ 0.5 |",
            "|---|---|---:|---:|---|---|"]
    rows.append(f"| lmparse (chat.completions) | qwen3 + qwen3 | {ours:.2f} | | | |")
    for peer, r in peers.items():
        if r.get("status") != "ok":
            rows.append(f"| {peer} | | {r.get('status')} | | | |")
            continue
        ratio = ours / r["us_per_token"]
        note = " (ran past 60 s: fewer runs)" if r.get("past_limit") else ""
        same = "yes" if _same_reply(r["reply"], reply) else "**no**"
        rows.append(f"| {peer} {r['version']} `OpenAIServingChat`{note} | {r['tool_parser']} + {r['reasoning_parser']} "
                    f"| {r['us_per_token']:.2f} | {ratio:.2f} | {same} | {_holds(ratio <= PEER_TARGET)} |")
    return rows


def render(results: dict, commands: list[str], image: str | None) -> str:
    stream = results["stream"]
    parts = [
        "## Serving path",
        "",
        f"One Qwen3 reply (reasoning, text, a `write_note` call with a long string argument), {stream['tokens']} "
        f"tokens of the {stream['tokenizer']} tokenizer streamed one token per step, replayed with no sleep.",
        "",
        "### In process: request body to SSE bytes, no HTTP",
        "",
        *_in_process(results["in_process"]),
        "",
        "### Loopback load: `lmparse serve` beside a bare Starlette SSE endpoint",
        "",
        f"`lmparse serve --family qwen3 --token-rate 0` (the simulated model at full speed, real tokenizer) and a "
        f"bare Starlette endpoint streaming lmparse's own events for the same request "
        f"({results['load']['events_per_response']} events a response), both under uvicorn (h11, asyncio loop, no "
        f"access log), each in its own process pinned to CPU 0; the load generator (an asyncio protocol per "
        f"kept-alive connection on uvloop, no HTTP library) in a third process on CPU 1. Before each run both "
        f"servers are left to go idle (a stream whose client left at the end of the run before goes on until "
        f"the server notices, and both share CPU 0). A token is an SSE event. The simulated engine "
        f"hands over four tokens per step at full speed, and lmparse sends a step's events (one per token) as "
        f"one body; the bare endpoint sends one event per body.",
        "",
        *_load(results["load"]),
        "",
        "The servers share CPU 0 with whatever else the machine runs: tokens/s follow its load, and so, less, "
        "does the CPU each server spent per token (from `/proc`, all its threads, over the run). The second "
        "ratio is what the first would be if both servers got the same share of the core.",
        "",
    ]
    if image:
        parts += [f"![serving tokens/s against concurrency]({image})", ""]
    parts += [
        "### The same token stream through vLLM's and SGLang's own chat serving layers",
        "",
        "Each peer in its own venv, its engine replaced by a stand-in that yields outputs made before the clock "
        "starts; the clock covers request validation, prompt rendering, the parsers and SSE serialization "
        "(lmparse's row: the same, the prompt rendered by no one, from the table above).",
        "",
        *_peers(results["peers"], results["in_process"]["chat.completions"]["us_per_token"], results["reply"]),
        "",
        f"Machine: {results['machine']}.",
        "",
        "Commands: " + "; ".join(f"`{c}`" for c in commands) + ".",
    ]
    return "\n".join(parts)


def plot(load: dict, path: Path) -> bool:
    """Tokens/s against concurrency, lmparse and bare Starlette; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    clients = [int(n) for n in load["runs"]]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=110)
    for name, label in (("bare", "bare Starlette SSE (ceiling)"), ("lmparse", "lmparse serve")):
        ax.plot(clients, [load["runs"][n][name] for n in load["runs"]], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(clients, [str(n) for n in clients])
    ax.set_xlabel("concurrent streaming clients")
    ax.set_ylabel("streamed tokens / s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True
