"""Plain-text tables of one benchmark run (the rows come from ``timing.record``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .fixtures import chunk_label

__all__ = ["Table", "fmt", "render_run", "render_dialects", "size_label"]


def fmt(value: float | None, unit: str = "") -> str:
    """Three significant figures without scientific notation; ``-`` for missing."""
    if value is None:
        return "-"
    if value >= 100:
        text = f"{value:.0f}"
    elif value >= 10:
        text = f"{value:.1f}"
    elif value >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3f}"
    return text + unit


def size_label(chars: int) -> str:
    if chars >= 1_000_000 and chars % 1_000_000 == 0:
        return f"{chars // 1_000_000}M"
    if chars >= 1000 and chars % 1000 == 0:
        return f"{chars // 1000}K"
    return str(chars)


class Table:
    def __init__(self, headers: Sequence[str], left: int = 1) -> None:
        self.headers = list(headers)
        self.left = left  # leading columns that hold names (left-aligned); the rest are numbers
        self.rows: list[list[str]] = []

    def add(self, *cells: object) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        widths = [max(len(r[i]) for r in [self.headers, *self.rows]) for i in range(len(self.headers))]

        def line(cells: list[str]) -> str:
            k = self.left
            out = [c.ljust(w) for c, w in zip(cells[:k], widths[:k], strict=False)]
            out += [c.rjust(w) for c, w in zip(cells[k:], widths[k:], strict=False)]
            return "  ".join(out).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(self.headers), rule, *(line(r) for r in self.rows)])


def _index(rows: Iterable[dict]) -> dict[tuple, dict]:
    return {(r["section"], r["fixture"], r["size"], r["chunk"]): r for r in rows}


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else fmt(a / b, "x")


def render_run(
    results: list[dict],
    *,
    size: int,
    kinds: Sequence[str],
    stack_chunks: Sequence[int | None],
    scanner_chunks: Sequence[int | None],
    linearity_sizes: Sequence[int],
    linearity_chunks: Sequence[int | None],
) -> str:
    """Sections 1-3 and 5 (ours alone: the peer is timed in section 8, interleaved with ours)."""
    ours = _index(r for r in results if r["impl"] == "lmparse")
    floor = _index(r for r in results if r["impl"] == "pass-through")
    out = _stack_section(ours, floor, kinds, stack_chunks, size)
    out += _scanner_section(ours, kinds, scanner_chunks, size)
    out += _linearity_section(ours, kinds, linearity_sizes, linearity_chunks, size)
    out += ["5. peers", "   the peer is timed in section 8, interleaved with ours (python -m bench --peers)"]
    return "\n".join(out)


def _stack_section(ours: dict, floor: dict, kinds: Sequence[str], chunks: Sequence[int | None], size: int
                   ) -> list[str]:
    """Sections 1 + 4: the stack, next to the pass-through floor."""
    table = Table(["fixture", "chunk", "chunks", "MB/s", "us/chunk", "floor MB/s", "vs floor"])
    for kind in kinds:
        for chunk in chunks:
            r = ours[("stack", kind, size, chunk)]
            f = floor[("passthrough", kind, size, chunk)]
            table.add(kind, chunk_label(chunk), r["chunks"], fmt(r["mb_per_s"]), fmt(r["us_per_chunk"]),
                      fmt(f["mb_per_s"]), _ratio(r["mb_per_s"], f["mb_per_s"]))
    return [
        f"1. qwen stack: create_parser(tool_parser='qwen', reasoning_parser='qwen3'), "
        f"ARG ~{size_label(size)} chars; MB/s = 1e6 input chars per wall second, final=True on the last chunk",
        "   floor = pass-through baseline (one DeltaMessage(content=chunk) per chunk, same call shape); "
        "vs floor = parser MB/s / floor MB/s",
        table.render(),
        "",
    ]


def _scanner_section(ours: dict, kinds: Sequence[str], chunks: Sequence[int | None], size: int) -> list[str]:
    """Section 2: the scanner alone."""
    table = Table(["fixture", "chunk", "chunks", "MB/s", "us/chunk"])
    for kind in kinds:
        for chunk in chunks:
            r = ours[("scanner", kind, size, chunk)]
            table.add(kind, chunk_label(chunk), r["chunks"], fmt(r["mb_per_s"]), fmt(r["us_per_chunk"]))
    return [f"2. JsonValueScanner.scan(chunk, 0, final) alone on ARG (~{size_label(size)} chars)", table.render(), ""]


def _linearity_section(ours: dict, kinds: Sequence[str], sizes: Sequence[int], chunks: Sequence[int | None],
                       size: int) -> list[str]:
    """Section 3: time per KB across fixture sizes."""
    first, last = sizes[0], sizes[-1]
    headers = ["fixture", "chunk"] + [f"us/KB @{size_label(s)}" for s in sizes]
    headers.append(f"ratio {size_label(last)}/{size_label(first)}")
    table = Table(headers)
    for kind in kinds:
        for chunk in chunks:
            per_kb = [_linearity_row(ours, kind, s, chunk, size) for s in sizes]
            cells = [kind, chunk_label(chunk)] + [fmt(v and v["us_per_kb"]) for v in per_kb]
            cells.append(_ratio(per_kb[-1] and per_kb[-1]["us_per_kb"], per_kb[0] and per_kb[0]["us_per_kb"]))
            table.add(*cells)
    return [
        "3. linearity: qwen stack time per 1000 input chars (us/KB); ratio = us/KB at the largest / at the smallest",
        table.render(),
        "",
    ]


def _linearity_row(rows: dict, kind: str, at: int, chunk: int | None, main_size: int) -> dict | None:
    """The 'linearity' row, or the main table's row when the size is the main fixture size."""
    row = rows.get(("linearity", kind, at, chunk))
    if row is None and at == main_size:
        row = rows.get(("stack", kind, at, chunk))
    return row


def _dialect_index(rows: Iterable[dict]) -> dict[tuple, dict]:
    return {(r["dialect"], r["section"], r["fixture"], r["size"], r["chunk"]): r for r in rows}


def render_dialects(
    rows: list[dict],
    *,
    dialects: Sequence[tuple[str, tuple[str, ...]]],
    plan: Sequence[tuple[str, str, int, int | None]],
    linearity: tuple[int, int],
    header: Sequence[str],
) -> str:
    """Sections 6 (throughput per dialect) and 7 (linearity per dialect), ours alone (the peer
    is timed in section 8).  ``dialects`` are ``(label, names)``, ``plan`` the
    ``(section, kind, size, chunk)`` each dialect ran, ``linearity`` the (small, large) sizes compared."""
    ours = _dialect_index(rows)
    out = list(header)
    out += _dialect_throughput(ours, dialects, plan)
    out += _dialect_linearity(ours, dialects, plan, linearity)
    return "\n".join(out)


def _dialect_throughput(ours: dict, dialects: Sequence[tuple[str, tuple[str, ...]]],
                        plan: Sequence[tuple[str, str, int, int | None]]) -> list[str]:
    """Section 6's table and its notes."""
    headers = ["dialect", "fixture", "size", "chunk", "chunks", "MB/s", "us/chunk"]
    table = Table(headers, left=2)
    for i, (label, _names) in enumerate(dialects):
        if i:
            table.add(*[""] * len(headers))
        first = True
        for section, kind, size, chunk in plan:
            if section != "dialect":
                continue
            r = ours.get((label, section, kind, size, chunk))
            table.add(label if first else "", kind, _call_size(kind, size), chunk_label(chunk),
                      r["chunks"] if r else "-", fmt(r and r["mb_per_s"]), fmt(r and r["us_per_chunk"]))
            first = False
    out = [table.render()]
    aliases = [f"{label} = {', '.join(names[1:])}" for label, names in dialects if len(names) > 1]
    if aliases:
        out.append("   aliases: " + "; ".join(aliases))
    out.append("")
    return out


def _dialect_linearity(ours: dict, dialects: Sequence[tuple[str, tuple[str, ...]]],
                       plan: Sequence[tuple[str, str, int, int | None]], linearity: tuple[int, int]) -> list[str]:
    """Section 7: string-argument time per KB at the small and the large size."""
    small, large = linearity
    table = Table(["dialect", "chunk", f"us/KB @{size_label(small)}", f"us/KB @{size_label(large)}",
                   f"ratio {size_label(large)}/{size_label(small)}"])
    chunks = [chunk for section, _kind, _size, chunk in plan if section == "linearity"]
    for label, _names in dialects:
        for chunk in chunks:
            a = _dialect_linearity_row(ours, label, large, chunk)
            b = _dialect_linearity_row(ours, label, small, chunk)
            table.add(label, chunk_label(chunk), fmt(b and b["us_per_kb"]), fmt(a and a["us_per_kb"]),
                      _ratio(a and a["us_per_kb"], b and b["us_per_kb"]))
    return [f"7. tool dialect linearity: string-arg time per 1000 input chars (us/KB) at {size_label(small)} and "
            f"{size_label(large)}; ratio = us/KB @{size_label(large)} / us/KB @{size_label(small)}", table.render()]


def _call_size(kind: str, size: int) -> str:
    return f"{size} args" if kind == "typed-args" else size_label(size)


def _dialect_linearity_row(rows: dict, label: str, size: int, chunk: int | None) -> dict | None:
    return rows.get((label, "linearity", "string-arg", size, chunk)) or rows.get(
        (label, "dialect", "string-arg", size, chunk)
    )


# ---- same-run ratios against the peer (bench.versus rows) ----

TARGET_RATIO_SMALL_CHUNKS = 4.0  # chunk 1, 4, 16 and one token or a few per chunk
TARGET_RATIO_256 = 3.0
TARGET_RATIO_WHOLE = 8.0  # whole and complete
TARGET_LINEARITY_10X = 11.0  # t(size) / t(size / 10)
TARGET_SLOWEST_CALL_S = 1e-3


def ratio_goal(chunking: str) -> float:
    """The issue's ratio target for one chunking."""
    if chunking in ("whole", "complete"):
        return TARGET_RATIO_WHOLE
    if chunking == "256":
        return TARGET_RATIO_256
    return TARGET_RATIO_SMALL_CHUNKS


def _grid(rows: Sequence[dict], chunkings: Sequence[str], cell) -> str:
    cases = list(dict.fromkeys(r["case"] for r in rows))
    index = {(r["case"], r["chunking"]): r for r in rows}
    table = Table(["case", *chunkings])
    for case in cases:
        table.add(case, *(cell(index.get((case, c))) for c in chunkings))
    return table.render()


def _ratio_cell(row: dict | None) -> str:
    if row is None or row["ratio"] is None:
        return "-"
    mark = "" if row["ratio"] >= ratio_goal(row["chunking"]) else " !"
    whole = "" if row.get("peer_chunking") in (None, "chars", "tokens") else "*"
    return f"x{fmt(row['ratio'])}{whole}{mark}"


def render_versus(rows: Sequence[dict], chunkings: Sequence[str], peer: str | None) -> str:
    """The ratio grid, both sides' MB/s, linearity and the slowest call, and the notes."""
    sizes = sorted({r["chars"] for r in rows})
    out = [f"8. same-run ratios vs {peer}: ours MB/s / {peer} MB/s, median of the interleaved pairs "
           f"(replies of {', '.join(size_label(s) for s in sizes)} chars; chunk 1 and tokens-1 on the smaller)"
           if peer else "8. lmparse alone (no peer run: python -m bench --peers)"]
    if peer:
        out += [
            "   ! below the target (x4 at chunk 1-16 and on token streams, x3 at 256, x8 whole and complete); "
            "* the peer needed its special tokens whole (its plain-chunk output was wrong)",
            _grid(rows, chunkings, _ratio_cell), "",
            f"   {peer} MB/s (median)", _grid(rows, chunkings, lambda r: fmt(r and r["peer_mbs"])), "",
        ]
    out += [
        "   lmparse MB/s (median)", _grid(rows, chunkings, lambda r: fmt(r and r["ours_mbs"])), "",
        f"   linearity: t(reply) / t(reply / 10), same chunking (linear = 10, goal <= {TARGET_LINEARITY_10X:g})",
        _grid(rows, chunkings, lambda r: fmt(r and r["linearity"])), "",
        "   slowest single stream_chunk call of one run, ms of CPU (thread time, gc on; goal < 1 ms)",
        _grid(rows, [c for c in chunkings if c != "complete"],
              lambda r: fmt(r and r["slowest_call_s"] is not None and r["slowest_call_s"] * 1e3 or None)),
    ]
    errors = [r for r in rows if r.get("peer_error") and r["peer_error"] != "not run"]
    for r in errors:
        out.append(f"   {peer} {r['case']} chunking {r['chunking']}: {r['peer_error'][:200]}")
    return "\n".join(out)


def versus_targets(rows: Sequence[dict]) -> list[dict]:
    """Every target of the ratio rows, met or not (reported, never asserted)."""
    checks = []
    for r in rows:
        where = f"{r['case']} chunking {r['chunking']}"
        if r["ratio"] is not None:
            goal = ratio_goal(r["chunking"])
            checks.append({"target": f"ratio {where}", "value": r["ratio"], "goal": goal, "met": r["ratio"] >= goal})
        checks.append({"target": f"linearity {where}", "value": r["linearity"], "goal": TARGET_LINEARITY_10X,
                       "met": r["linearity"] <= TARGET_LINEARITY_10X})
        if r["slowest_call_s"] is not None:
            checks.append({"target": f"slowest call {where}", "value": r["slowest_call_s"],
                           "goal": TARGET_SLOWEST_CALL_S, "met": r["slowest_call_s"] < TARGET_SLOWEST_CALL_S})
    return checks
