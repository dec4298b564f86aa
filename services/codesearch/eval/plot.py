"""Per-class MRR@10 bars, one bar per run (mode, rerank variant or baseline), written as a PNG."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

BAR_GROUP_WIDTH = 0.8  # share of each class slot the bars fill; the rest separates classes
FIG_SIZE = (10.0, 4.5)  # inches; wide enough for six classes plus ALL with labels
DPI = 110  # readable in a terminal image viewer, small on disk


def plot_mrr(runs: Mapping[str, Mapping[str, Any]], out: str | Path, metric: str = "mrr10") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(runs)
    classes: list[str] = []
    for r in runs.values():
        classes += [k for k in r["summary"] if "/" not in k and k not in classes and k != "ALL"]
    classes.append("ALL")
    width = BAR_GROUP_WIDTH / max(1, len(names))
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    for i, name in enumerate(names):
        rows = runs[name]["summary"]
        ys = [float(rows.get(c, {}).get(metric) or 0.0) for c in classes]
        xs = [j - BAR_GROUP_WIDTH / 2 + (i + 0.5) * width for j in range(len(classes))]
        ax.bar(xs, ys, width=width, label=name)
    ax.set_xticks(range(len(classes)))
    ax.set_xticklabels(classes)
    ax.set_ylim(0, 1)
    ax.set_ylabel("MRR@10" if metric == "mrr10" else metric)
    ax.set_title(f"{'MRR@10' if metric == 'mrr10' else metric} per query class")
    ax.legend(fontsize="small", ncol=min(4, len(names)))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out
