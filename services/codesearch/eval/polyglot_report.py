"""Tables, confidence calibration and plots of a polyglot eval run, one column per mode and baseline.

summary.json: {"kind": "polyglot", "set", "created", "split": {"fit": [...], "held-out": [...]},
"runs": {NAME: {"run_file", "kind", "summary": rows, "calibration": {...}}}} where rows are
polyglot.summarize's (ALL, categories, split:*, repo:*, lang:*), each {ndcg10, hit1, recall10, n, repos}.
`codesearch eval --compare A B` reads it like the stdlib summaries.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codesearch.eval.calibration import auroc, bins, expected_calibration_error, format_bins
from codesearch.eval.polyglot import (
    CATEGORIES,
    FIT_REPOS,
    HELD_OUT_REPOS,
    PolyglotSet,
    published_semble,
    score_query,
)
from codesearch.eval.polyglot_languages import format_languages
from codesearch.eval.polyglot_latency import format_latency

LABEL_WIDTH = 26
CELL = 9
PUBLISHED = "semble(pub)"  # the column of semble's published NDCG@10
FIG_SIZE = (11.0, 4.5)  # inches: 21 repositories or 19 languages with labels
DPI = 110


def make_summary(pset: PolyglotSet, runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "polyglot",
        "set": str(pset.folder.resolve()),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "split": {"fit": list(FIT_REPOS), "held-out": list(HELD_OUT_REPOS)},
        "runs": dict(runs),
    }


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def _grid(
    title: str, keys: Sequence[str], runs: Mapping[str, Mapping[str, Any]], metric: str, published: bool
) -> str:
    names = list(runs)
    cols = names + ([PUBLISHED] if published else [])
    width = max([CELL, *(len(n) + 2 for n in [*names, PUBLISHED])])
    head = f"{title:<{LABEL_WIDTH}}" + "".join(f"{n:>{width}}" for n in cols)
    lines = [head, "-" * len(head)]
    for key in keys:
        if not any(key in r["summary"] for r in runs.values()):
            continue
        cells = "".join(f"{_f(runs[n]['summary'].get(key, {}).get(metric)):>{width}}" for n in names)
        if published:
            cells += f"{_f(published_semble(key)):>{width}}"
        label = key.split(":", 1)[-1]
        n = next((r["summary"][key].get("n") for r in runs.values() if key in r["summary"]), None)
        lines.append(f"{label + (f' ({n})' if n else ''):<{LABEL_WIDTH}}{cells}")
    return "\n".join(lines)


def format_report(runs: Mapping[str, Mapping[str, Any]], pset: PolyglotSet) -> str:
    """NDCG@10 per category for the whole set and each half, then hit@1 and recall@10, then per repository and
    per language; semble's published figure beside NDCG@10 where it published one."""
    any_rows = next(iter(runs.values()))["summary"] if runs else {}
    blocks = []
    scopes = [("all repositories", "")]
    scopes += [(f"{h} repositories", f"split:{h}") for h in ("held-out", "fit") if f"split:{h}" in any_rows]
    for metric, label in (("ndcg10", "NDCG@10"), ("hit1", "hit@1"), ("recall10", "recall@10")):
        for title, prefix in scopes:
            keys = [prefix or "ALL", *((f"{prefix}/{c}" if prefix else c) for c in CATEGORIES)]
            blocks.append(
                f"{label}, {title} (macro over repositories)\n"
                + _grid("category", keys, runs, metric, metric == "ndcg10")
            )
    repos = [k for k in any_rows if k.startswith("repo:") and "/" not in k]
    held = [r for r in repos if r[5:] in HELD_OUT_REPOS]
    fit = [r for r in repos if r[5:] not in HELD_OUT_REPOS]
    blocks.append(
        "NDCG@10 per repository (held-out first)\n" + _grid("repository", held + fit, runs, "ndcg10", True)
    )
    for c in CATEGORIES:
        keys = [f"{r}/{c}" for r in held + fit]
        blocks.append(f"NDCG@10 per repository, {c}\n" + _grid("repository", keys, runs, "ndcg10", False))
    langs = [k for k in any_rows if k.startswith("lang:") and "/" not in k]
    blocks.append("NDCG@10 per language\n" + _grid("language", langs, runs, "ndcg10", False))
    blocks.append(
        "NDCG@10 per language, symbol\n"
        + _grid("language", [f"{k}/symbol" for k in langs], runs, "ndcg10", False)
    )
    blocks.append(format_languages(runs))  # #18: the language x category table (eval/polyglot_languages.py)
    latency_table = format_latency(runs)  # the rerank stage's cost per query (eval/polyglot_latency.py)
    if latency_table:
        blocks.append(latency_table)
    for name, r in runs.items():
        if r.get("calibration"):
            blocks.append(format_calibration(name, r["calibration"]))
    return "\n\n".join(blocks)


def calibration(pset: PolyglotSet, run: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """AUROC and expected calibration error of the response's confidence for a correct top hit, overall, per
    category, per half and per category within each half, and the hit@1 of each confidence bin, over all queries
    and over the held-out half; None when the run has no confidence (baselines)."""
    pairs: list[tuple[str, str, float, bool]] = []
    for q in pset.queries:
        rec = run.get(q.qid)
        if rec is None or rec.get("confidence") is None:
            continue
        hit = score_query(q, rec.get("results") or [])["hit1"] > 0
        half = "held-out" if q.repo in HELD_OUT_REPOS else "fit"
        pairs.append((q.category, half, float(rec["confidence"]), hit))
    if not pairs:
        return None

    def au(sel: list[tuple[str, str, float, bool]]) -> dict[str, Any]:
        scored = [(c, y) for *_, c, y in sel]
        return {
            "auroc": auroc([c for c, _ in scored], [y for _, y in scored]),
            "ece": expected_calibration_error(scored),
            "n": len(sel),
        }

    out: dict[str, Any] = {"ALL": au(pairs)}
    for c in CATEGORIES:
        out[c] = au([p for p in pairs if p[0] == c])
    for h in ("fit", "held-out"):
        out[f"split:{h}"] = au([p for p in pairs if p[1] == h])
        for c in CATEGORIES:
            out[f"split:{h}/{c}"] = au([p for p in pairs if p[1] == h and p[0] == c])
    out["bins"] = _bins(pairs)
    out["bins_held_out"] = _bins([p for p in pairs if p[1] == "held-out"])
    return out


def _bins(pairs: list[tuple[str, str, float, bool]]) -> list[dict[str, Any]]:
    return bins([(c, y) for *_, c, y in pairs])


def format_calibration(name: str, cal: Mapping[str, Any]) -> str:
    lines = [f"confidence of {name}: AUROC and expected calibration error (ECE) for a correct top hit"]
    halves = [f"split:{h}{c}" for h in ("fit", "held-out") for c in ("", *(f"/{c}" for c in CATEGORIES))]
    for key in ("ALL", *CATEGORIES, *halves):
        row = cal.get(key) or {}
        ece = f"  ECE {_f(row['ece'])}" if row.get("ece") is not None else ""
        lines.append(f"  {key:<27} {_f(row.get('auroc')):>7}{ece}  over {row.get('n', 0)} queries")
    for title, key in (("all queries", "bins"), ("held-out", "bins_held_out")):
        if key not in cal:
            continue  # a summary written before the held-out bins
        lines.append(f"  hit@1 per confidence bin, {title}:")
        lines += format_bins(cal[key], indent="    ")
    return "\n".join(lines)


def plot(runs: Mapping[str, Mapping[str, Any]], out_dir: Path, metric: str = "ndcg10") -> list[Path]:
    """Bars of NDCG@10 per run: one PNG per category (x: repositories) and one per language (x: categories)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    any_rows = next(iter(runs.values()))["summary"]
    repos = [k for k in any_rows if k.startswith("repo:") and "/" not in k]
    langs = [k for k in any_rows if k.startswith("lang:") and "/" not in k]
    written = []
    charts: list[tuple[str, list[str], list[str]]] = [
        (f"category-{c}", [f"{r}/{c}" for r in repos], [r[5:] for r in repos]) for c in ("ALL", *CATEGORIES)
    ]
    charts[0] = ("category-ALL", repos, [r[5:] for r in repos])
    charts += [
        (f"language-{lang[5:]}", [lang, *(f"{lang}/{c}" for c in CATEGORIES)], ["all", *CATEGORIES])
        for lang in langs
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    names = list(runs)
    width = 0.8 / max(1, len(names))
    for title, keys, labels in charts:
        fig, ax = plt.subplots(figsize=FIG_SIZE)
        for i, name in enumerate(names):
            ys = [float(runs[name]["summary"].get(k, {}).get(metric) or 0.0) for k in keys]
            xs = [j - 0.4 + (i + 0.5) * width for j in range(len(keys))]
            ax.bar(xs, ys, width=width, label=name)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(
            labels, rotation=45 if len(keys) > 6 else 0, ha="right" if len(keys) > 6 else "center"
        )
        ax.set_ylim(0, 1)
        ax.set_ylabel("NDCG@10" if metric == "ndcg10" else metric)
        ax.set_title(f"polyglot {title.replace('-', ': ')}")
        ax.legend(fontsize="small", ncol=min(4, len(names)))
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        path = out_dir / f"{title}.png"
        fig.savefig(path, dpi=DPI)
        plt.close(fig)
        written.append(path)
    return written
