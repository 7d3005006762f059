"""The benchmark page's plots (matplotlib, the ``bench`` extra): MB/s against chunking, ours beside the peer."""

from __future__ import annotations

import math
from pathlib import Path
from collections.abc import Sequence

__all__ = ["plot_versus"]


def plot_versus(rows: Sequence[dict], chunkings: Sequence[str], peer: str | None, path: Path) -> Path | None:
    """One panel per case: MB/s (log scale) at each chunking, lmparse and the peer.  None
    (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    cases = list(dict.fromkeys(r["case"] for r in rows))
    index = {(r["case"], r["chunking"]): r for r in rows}
    columns = 3
    lines = math.ceil(len(cases) / columns)
    figure, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.0 * lines), squeeze=False, sharey=True)
    xs = range(len(chunkings))
    for panel, case in zip(axes.flat, cases, strict=False):
        for key, label, style in (("ours_mbs", "lmparse", "o-"), ("peer_mbs", peer, "s--")):
            if label is None:
                continue
            ys = [index[(case, c)][key] if (case, c) in index and index[(case, c)][key] else math.nan
                  for c in chunkings]
            panel.plot(xs, ys, style, label=label, markersize=4)
        panel.set_title(case, fontsize=10)
        panel.set_yscale("log")
        panel.set_xticks(list(xs), list(chunkings), rotation=45, fontsize=7)
        panel.grid(True, which="both", alpha=0.3)
    for panel in axes.flat[len(cases):]:
        panel.set_visible(False)
    for panel in axes[:, 0]:
        panel.set_ylabel("MB/s")
    axes.flat[0].legend(fontsize=8)
    figure.suptitle("MB/s against chunking (characters per chunk, whole, complete, real tokens)", fontsize=11)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
