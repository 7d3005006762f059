"""The comparison's plots (matplotlib, Agg backend): PNGs under docs/img/benchmarks/.

- ``peers-mbps-by-chunk.png``: per format, MB/s against chunk size (and the
  non-streaming parse) at 100 KB, one line per implementation, log scale;
- ``peers-time-by-size.png``: per format, seconds against argument size on log-log
  axes at chunk 16, one line per implementation; a run killed at the limit is an
  ``x`` at the limit.

Without matplotlib (``pip install -e '.[bench]'``) no plot is drawn and the page says so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .cases import chunk_name
from .report import NAMES, SUMMARY_CHUNK, size_label

__all__ = ["plot_all"]

COLORS = {"lmparse": "#1b7837", "vllm": "#2166ac", "sglang": "#b2182b", "lmdeploy": "#e08214", "smg": "#762a83"}


def _grid(plt: Any, count: int) -> tuple[Any, list[Any]]:
    cols = min(3, count)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _label(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)


def _save(plt: Any, fig: Any, axes: list[Any], path: Path) -> None:
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _impls(rows: list[dict]) -> list[str]:
    return [p for p in COLORS if any(r["peer"] == p for r in rows)]


def _by_chunk(plt: Any, result: dict, formats: list[str], path: Path) -> None:
    rows, chunks = result["rows"], result["plan"]["chunks"]
    size = min(result["plan"]["sizes"], key=lambda s: abs(s - 100_000))
    fig, axes = _grid(plt, len(formats))
    for ax, fmt in zip(axes, formats, strict=True):
        for peer in _impls(rows):
            points = [(i, r["mb_per_s"]) for i, chunk in enumerate(chunks) for r in rows
                      if (r["format"], r["size"], r["chunk"], r["peer"]) == (fmt, size, chunk, peer)
                      and r["status"] == "ok"]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", color=COLORS[peer], label=NAMES[peer])
        ax.set_yscale("log")
        ax.set_xticks(range(len(chunks)), [chunk_name(c) for c in chunks])
        _label(ax, f"{fmt}, {size_label(size)}", "chunk (characters)", "MB/s")
    _save(plt, fig, axes, path)


def _by_size(plt: Any, result: dict, formats: list[str], path: Path) -> None:
    rows, limit = result["rows"], result["plan"]["limit_s"]
    chunk = SUMMARY_CHUNK if SUMMARY_CHUNK in result["plan"]["chunks"] else result["plan"]["chunks"][0]
    fig, axes = _grid(plt, len(formats))
    for ax, fmt in zip(axes, formats, strict=True):
        for peer in _impls(rows):
            mine = sorted((r for r in rows if (r["format"], r["chunk"], r["peer"]) == (fmt, chunk, peer)),
                          key=lambda r: r["size"])
            ok = [(r["size"], r["wall_s"]) for r in mine if r["status"] == "ok"]
            if ok:
                ax.plot(*zip(*ok, strict=True), marker="o", color=COLORS[peer], label=NAMES[peer])
            for r in mine:
                if r["status"] == "timeout":
                    ax.plot([r["size"]], [limit], marker="x", markersize=10, color=COLORS[peer])
        ax.set_xscale("log")
        ax.set_yscale("log")
        _label(ax, f"{fmt}, chunk {chunk_name(chunk)}", "argument size (characters)", "seconds per reply")
    _save(plt, fig, axes, path)


def plot_all(result: dict, images: Path, prefix: str = "peers") -> list[tuple[str, str]]:
    """Draw both figures (``PREFIX-mbps-by-chunk.png``, ``PREFIX-time-by-size.png``); ``[(alt text, path)]``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plots skipped: matplotlib is not installed (pip install -e '.[bench]')", file=sys.stderr)
        return []
    formats = list(dict.fromkeys(r["format"] for r in result["rows"]))
    if not formats:
        return []
    images.mkdir(parents=True, exist_ok=True)
    chunk_path, size_path = images / f"{prefix}-mbps-by-chunk.png", images / f"{prefix}-time-by-size.png"
    _by_chunk(plt, result, formats, chunk_path)
    _by_size(plt, result, formats, size_path)
    return [("MB/s against chunk size, per format and implementation", str(chunk_path)),
            ("Time against argument size, log-log, per format and implementation", str(size_path))]
