"""Tables of a comparison run: the console text and the docs/benchmarks.md sections it writes.

``summary``: per format, lmparse and each peer at 100 KB (or the size nearest to it)
chunk 16, MB/s and the ratio (peer time / lmparse time, median of pairs).  ``peers``:
the machine, the versions, the command, every row, growth per decade, what each peer
got wrong, and the plots (``bench.compare.plots``).
"""

from __future__ import annotations

from pathlib import Path

from ..page import write_section
from .cases import chunk_name
from .client import PEER_VERSIONS
from .formats import PEERS

__all__ = ["render_console", "write_docs", "summary_markdown", "peers_markdown", "SUMMARY_CHUNK"]

SUMMARY_SIZE = 100_000
SUMMARY_CHUNK = 16
TARGET_QUADRATIC = 50.0  # x vLLM hermes and SGLang qwen25 at 100 KB
TARGET_RUST = 0.5  # x SMG's Rust reasoning parser's MB/s on think at chunks 1-16
TARGET_CORES = 3.0  # the compiled core over the pure one at chunks 1-16
NAMES = {"lmparse": "lmparse", "vllm": "vLLM", "sglang": "SGLang", "lmdeploy": "LMDeploy", "smg": "SMG (Rust)",
         "pure": "lmparse pure core"}


def size_label(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 and size % 1_000_000 == 0 else (
        f"{size // 1000} KB" if size >= 1000 and size % 1000 == 0 else f"{size} chars")


def _index(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["format"], r["size"], r["chunk"], r["peer"]): r for r in rows}


def cell(row: dict | None, ratio: bool = True) -> str:
    """``12.3 MB/s (x45)``, or what kept the row from being timed."""
    if row is None:
        return "—"
    if row["status"] != "ok":
        return {"timeout": "> limit", "wrong": "wrong output", "error": "crashed", "skipped": "skipped"}.get(
            row["status"], row["status"])
    text = f"{row['mb_per_s']:.3g} MB/s"
    if ratio and row["ratio"] is not None:
        text += f" (x{row['ratio']:.3g})"
    if row.get("chunking") not in (None, "chars"):
        text += "*"
    return text


def _nearest(sizes: list[int], want: int) -> int:
    return min(sizes, key=lambda s: abs(s - want))


def _peers_in(result: dict) -> list[str]:
    return [p for p in PEERS if p in result["impls"] or p in result["missing"]]


def summary_markdown(result: dict) -> str:
    rows, peers = result["rows"], _peers_in(result)
    sizes = result["plan"]["sizes"]
    size = _nearest(sizes, SUMMARY_SIZE)
    chunk = SUMMARY_CHUNK if SUMMARY_CHUNK in result["plan"]["chunks"] else result["plan"]["chunks"][0]
    index = _index(rows)
    formats = list(dict.fromkeys(r["format"] for r in rows))
    head = "| Format | lmparse | " + " | ".join(NAMES[p] for p in peers) + " |"
    lines = [
        f"One call with a {size_label(size)} string argument (`think`: a {size_label(size)} reasoning), "
        f"streamed in {chunk_name(chunk)}-character chunks; MB/s of reply text, and in brackets how many "
        "times longer the peer took than lmparse (median of interleaved pairs, same run).  "
        "Details, every chunk size and the plots: [all peers side by side](#all-peers-side-by-side).", "",
        head, "|" + "---|" * (2 + len(peers)),
    ]
    for fmt in formats:
        cells = [cell(index.get((fmt, size, chunk, "lmparse")), ratio=False)]
        cells += [cell(index.get((fmt, size, chunk, peer))) for peer in peers]
        lines.append(f"| {fmt} | " + " | ".join(cells) + " |")
    lines += ["", "\\* measured on cuts that keep markers or tokens whole: plain character cuts gave a wrong output.",
              "", *_targets(result, size)]
    return "\n".join(lines)


def _targets(result: dict, size: int) -> list[str]:
    rows = [r for r in result["rows"] if r["peer"] != "lmparse"]
    # The quadratic cost is per streamed chunk: the target is about the streamed chunk sizes.
    quadratic = [r for r in rows if r["size"] == size and isinstance(r["chunk"], int) and (r["peer"], r["format"])
                 in {("vllm", "qwen-json"), ("sglang", "qwen-json")} and r["status"] in ("ok", "timeout")]
    lines = ["Targets (reported, never asserted):"]
    for peer in ("vllm", "sglang"):
        mine = [r for r in quadratic if r["peer"] == peer]
        if not mine:
            continue
        low = min(mine, key=lambda r: r["ratio"] if r["ratio"] is not None else float("inf"))
        held = all(r["status"] == "timeout" or r["ratio"] >= TARGET_QUADRATIC for r in mine)
        verdict = "**held**" if held else "**missed**"
        lines.append(f"- x{TARGET_QUADRATIC:.0f} {NAMES[peer]} on qwen-json at {size_label(size)}, every streamed "
                     f"chunk size: {verdict} (lowest: {cell(low)} at chunk {chunk_name(low['chunk'])})")
    lines += _rust_target(result)
    lines += _cores_target(result)
    timed = [r for r in rows if r["status"] == "ok" and r["peer"] != "pure"]
    behind = [r for r in timed if r["ratio"] is not None and r["ratio"] < 1.0]
    verdict = "**held**" if not behind else f"**missed** in {len(behind)} of {len(timed)} timed configurations"
    lines.append(f"- ahead of every peer on every format at every chunk size and size: {verdict}")
    for r in sorted(behind, key=lambda r: r["ratio"])[:12]:
        lines.append(f"  - {NAMES[r['peer']]} {r['format']} {size_label(r['size'])} chunk {chunk_name(r['chunk'])}: "
                     f"x{r['ratio']:.2f}")
    return lines


def _rust_target(result: dict) -> list[str]:
    """lmparse at least TARGET_RUST x SMG's MB/s on think at streamed chunks up to 16, and right at every chunking."""
    think = [r for r in result["rows"] if r["format"] == "think"]
    smg = [r for r in think if r["peer"] == "smg" and isinstance(r["chunk"], int) and r["chunk"] <= 16]
    if not smg:
        return []
    timed = [r for r in smg if r["status"] == "ok"]
    ours_wrong = [r for r in think if r["peer"] == "lmparse" and r["status"] != "ok"]
    low = min(timed, key=lambda r: r["ratio"]) if timed else None
    held = bool(timed) and not ours_wrong and low is not None and low["ratio"] >= TARGET_RUST
    # A starred SMG cell was timed on cuts that keep the markers whole: on plain cuts it was wrong.
    smg_wrong = sorted({chunk_name(r["chunk"]) for r in think if r["peer"] == "smg"
                        and (r["status"] == "wrong" or r.get("chunking") not in (None, "chars"))}, key=_chunk_order)
    lowest = f"lowest: x{low['ratio']:.2f} at {size_label(low['size'])} chunk {chunk_name(low['chunk'])}" if low else (
        "SMG was timed at none of them")
    return [f"- x{TARGET_RUST} {NAMES['smg']}'s MB/s on think at chunks 1-16, lmparse right at every chunking: "
            f"{'**held**' if held else '**missed**'} ({lowest}; lmparse wrong at {len(ours_wrong)} think "
            f"configurations; SMG wrong on plain character cuts at chunk {', '.join(smg_wrong) or 'none'})"]


def _cores_target(result: dict) -> list[str]:
    """The compiled core (the driver's) at least TARGET_CORES x the pure one (the ``pure`` peer) at chunks 1-16."""
    pure = [r for r in result["rows"] if r["peer"] == "pure" and r["status"] == "ok" and isinstance(r["chunk"], int)
            and r["chunk"] <= 16 and r["ratio"] is not None]
    if not pure:
        return []
    if not str(result.get("core", "")).startswith("compiled"):
        return [f"- x{TARGET_CORES:.0f} compiled over pure core: not measured (the driver ran {result.get('core')})"]
    low = min(pure, key=lambda r: r["ratio"])
    held = low["ratio"] >= TARGET_CORES
    short = sorted({r["format"] for r in pure if r["ratio"] < TARGET_CORES})
    return [f"- x{TARGET_CORES:.0f} compiled core over the pure one at chunks 1-16, every format: "
            f"{'**held**' if held else '**missed**'} (lowest: x{low['ratio']:.2f}, {low['format']} "
            f"{size_label(low['size'])} chunk {chunk_name(low['chunk'])}"
            + (f"; under x{TARGET_CORES:.0f}: {', '.join(short)})" if short else ")")]


def _chunk_order(name: str) -> tuple[int, int]:
    return (0, int(name)) if name.isdigit() else (1, 0)


def _growth(index: dict, fmt: str, peer: str, chunk: object, sizes: list[int]) -> str:
    parts = []
    for small, large in zip(sizes, sizes[1:], strict=False):
        a, b = index.get((fmt, small, chunk, peer)), index.get((fmt, large, chunk, peer))
        if a and b and a["status"] == b["status"] == "ok":
            parts.append(f"{b['wall_s'] / a['wall_s']:.3g}")
        else:
            parts.append("—")
    return " / ".join(parts)


def _format_table(result: dict, fmt: str, peers: list[str]) -> list[str]:
    index, plan = _index(result["rows"]), result["plan"]
    sizes = sorted(plan["sizes"])
    impls = ["lmparse", *peers]
    lines = [f"#### {fmt}", "", "| size | chunk | " + " | ".join(NAMES[p] for p in impls) + " |",
             "|" + "---|" * (2 + len(impls))]
    for chunk in plan["chunks"]:
        for size in sizes:
            cells = [cell(index.get((fmt, size, chunk, p)), ratio=p != "lmparse") for p in impls]
            lines.append(f"| {size_label(size)} | {chunk_name(chunk)} | " + " | ".join(cells) + " |")
    if len(sizes) > 1:
        steps = " / ".join(f"{size_label(b)}÷{size_label(a)}" for a, b in zip(sizes, sizes[1:], strict=False))
        lines += ["", f"Growth, time {steps} (linear: the size ratio, 10 per decade):", "",
                  "| chunk | " + " | ".join(NAMES[p] for p in impls) + " |", "|" + "---|" * (1 + len(impls))]
        for chunk in plan["chunks"]:
            lines.append(f"| {chunk_name(chunk)} | " + " | ".join(_growth(index, fmt, p, chunk, sizes) for p in impls)
                         + " |")
    return lines + [""]


def _findings(result: dict) -> list[str]:
    bad = [r for r in result["rows"] if r["status"] in ("wrong", "error", "timeout")]
    # Starred cells: right only once the cuts kept markers (or tokens) whole.
    starred = [r for r in result["rows"] if r["status"] == "ok" and r.get("chunking") not in (None, "chars")]
    lines = []
    if bad:
        lines += ["What was not timed, and why (a wrong output is not timed; the limit kills a run and skips the "
                  "larger sizes of that format and chunking):", ""]
        lines += [_finding(r, r["status"]) for r in bad]
    else:
        lines.append("No implementation was left untimed: none was wrong on every cut, crashed or ran past the limit.")
    if starred:
        lines += ["", "Wrong on plain character cuts, so timed (\\*) on cuts that keep markers or tokens whole:", ""]
        lines += [_finding(r, f"wrong on character cuts, right on {r['chunking']}") for r in starred]
    return lines


def _finding(row: dict, what: str) -> str:
    error = (row["error"] or "").replace("|", "\\|").replace("\n", " ")[:300]
    return (f"- {NAMES[row['peer']]} {row['format']} {size_label(row['size'])} chunk {chunk_name(row['chunk'])}: "
            f"{what}" + (f": {error}" if error else ""))


def peers_markdown(result: dict, images: list[str], title: str = "## All peers side by side") -> str:
    m, plan, peers = result["machine"], result["plan"], _peers_in(result)
    versions = [f"lmparse @ {m['commit']}" + (f" ({result['core']})" if result.get("core") else "")]
    versions += [result["impls"].get(p) or f"{p} {PEER_VERSIONS[p]} ({result['missing'].get(p, 'not run')})"
                 for p in peers]
    lines = [
        title, "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['implementation']} {m['python']} ({m['platform']}), "
        f"{m['date']}.  Versions: {', '.join(versions)}.  Run: `{result['command']}`"
        f"{' (`make bench-peers`)' if title.startswith('## ') else ''}, {result['elapsed_s'] / 60:.0f} min.", "",
        "Each peer runs in its own virtualenv as a worker subprocess (`bench/compare/worker.py`) and is driven "
        "the way its server drives it: vLLM's composed parser through `parse_delta` (which calls "
        "`extract_reasoning_streaming` / `extract_tool_calls_streaming` with previous/current/delta text and "
        "token ids from the family's real tokenizer) and `parse`; SGLang's `ReasoningParser` and "
        "`FunctionCallParser.parse_stream_chunk` / `parse_stream_end` and `parse_non_stream`; LMDeploy's "
        "`default` response parser `stream_chunk` / `parse_complete`; SMG's Rust `reasoning_parser` crate "
        "(built from `../shared/peers` by `scripts/setup_rust_peer.sh`, never vendored) through our driver "
        "`bench/compare/rust/smg_driver.rs`: `parse_reasoning_streaming_incremental` per chunk and "
        "`detect_and_parse_reasoning`, timed by the driver's own loop (no interpreter or pipe in its time; "
        "reasoning parsers only, so `think` alone).  Every output is checked (call names, "
        "arguments equal as JSON, reasoning, content) before it is timed.  A cell is MB/s of reply text and, "
        "for a peer, how many times longer it took than lmparse (median of "
        f"{plan['pairs']} interleaved pairs; one pair when the peer's check alone took over 10 s).  "
        f"Limit {plan['limit_s']:.0f} s per configuration; each sample lasts at least "
        f"{plan['min_sample_s'] * 1000:.0f} ms.  `complete` is the non-streaming parse.", "",
    ]
    lines += [f"![{alt}]({path})" for alt, path in images] + [""] if images else []
    for fmt in dict.fromkeys(r["format"] for r in result["rows"]):
        lines += _format_table(result, fmt, peers)
    lines += _findings(result)
    return "\n".join(lines)


def render_console(result: dict) -> str:
    return summary_markdown(result) + "\n\n" + peers_markdown(result, [])


def write_docs(result: dict, page: Path, images: Path, section: str | None = None, title: str | None = None) -> None:
    """The ``summary`` and ``peers`` sections and their plots; with ``section``, a run of its own
    (some formats or peers) in that section alone, plots named after it, the full run's untouched."""
    from .plots import plot_all

    written = plot_all(result, images, prefix=section or "peers")
    relative = [(alt, Path(p).resolve().relative_to(page.resolve().parent).as_posix()
                 if Path(p).resolve().is_relative_to(page.resolve().parent) else str(p)) for alt, p in written]
    if section:
        formats = ", ".join(dict.fromkeys(r["format"] for r in result["rows"]))
        peers = ", ".join(NAMES[p] for p in _peers_in(result))
        heading = f"### {title}" if title else f"### {formats} beside {peers}: a run of its own"
        write_section(section, peers_markdown(result, relative, heading) + "\n\n" + summary_markdown(result), page)
        return
    write_section("summary", summary_markdown(result), page)
    write_section("peers", peers_markdown(result, relative), page)
