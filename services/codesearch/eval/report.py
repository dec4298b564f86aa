"""The summary JSON of an eval run and the tables printed from it.

summary.json: {"k", "slack_lines", "queries", "repo", "created", "runs": {NAME: {"run_file", "kind", "summary"}}}
where each "summary" maps row keys ("definition", "definition/bare", ..., "ALL") to score.py's aggregate
fields plus ndcg10, invalid (INVALID_ARGUMENT answers, scored as zero results) and errors.
A score.py --json file ({"run", "summary", ...}) is read as a one-run summary, so either can be compared.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codesearch.eval.metrics import SLACK, K

COLUMNS = (  # (header, key, width, is_latency)
    ("n", "n", 5, False),
    ("hit@1", "hit1", 8, False),
    ("hit@10", "hit10", 8, False),
    ("MRR@10", "mrr10", 8, False),
    ("R@10", "recall10", 7, False),
    ("R@10cap", "recall10cap", 8, False),
    ("nDCG@10", "ndcg10", 8, False),
    ("zero", "zero", 7, False),
    ("inval", "invalid", 6, False),
    ("p50ms", "lat_p50_ms", 9, True),
    ("p95ms", "lat_p95_ms", 9, True),
)
LABEL_WIDTH = 24


def make_summary(queries_path: str, repo: str, runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "k": K,
        "slack_lines": SLACK,
        "queries": str(Path(queries_path).resolve()),
        "repo": repo,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": dict(runs),
    }


def load_summary(path: str | Path) -> dict[str, dict[str, Any]]:
    """Run name -> {"summary": rows, ...}, from our summary.json or from score.py --json output."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, dict) and isinstance(data.get("runs"), dict):
        return data["runs"]
    if isinstance(data, dict) and isinstance(data.get("summary"), dict):
        return {str(data.get("run") or Path(path).stem): {"summary": data["summary"]}}
    raise ValueError(f"{path}: neither an eval summary nor a score.py --json file")


def fmt(v: Any, lat: bool = False) -> str:
    if v is None:
        return "-"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return f"{v:.1f}" if lat else f"{v:.3f}"


def format_table(name: str, rows: Mapping[str, Mapping[str, Any]], variants: bool = True) -> str:
    hdr = f"{'class':<{LABEL_WIDTH}}" + "".join(f"{h:>{w}}" for h, _, w, _ in COLUMNS)
    lines = [f"run: {name}", hdr, "-" * len(hdr)]
    for key, s in rows.items():
        if "/" in key and not variants:
            continue
        label = ("  " + key.split("/", 1)[1]) if "/" in key else key
        cells = "".join(f"{fmt(s.get(k), lat):>{w}}" for _, k, w, lat in COLUMNS)
        lines.append(f"{label:<{LABEL_WIDTH}}{cells}")
    all_row = rows.get("ALL", {})
    if all_row.get("invalid"):
        lines.append(f"note: {all_row['invalid']} queries answered INVALID_ARGUMENT (scored as zero results)")
    if all_row.get("errors"):
        lines.append(
            f"WARNING: {all_row['errors']} queries failed with other errors (scored as zero results)"
        )
    if all_row.get("missing"):
        lines.append(f"WARNING: {all_row['missing']} query ids missing from the run (scored as zero results)")
    return "\n".join(lines)


def format_overview(runs: Mapping[str, Mapping[str, Any]], metric: str = "mrr10") -> str:
    """One row per class, one column per run: every mode and baseline side by side."""
    names = list(runs)
    width = max([9, *(len(n) + 2 for n in names)])
    keys: list[str] = []
    for r in runs.values():
        keys += [k for k in r["summary"] if "/" not in k and k not in keys]
    if "ALL" in keys:
        keys = [k for k in keys if k != "ALL"] + ["ALL"]
    lines = [f"{metric} per class", f"{'class':<{LABEL_WIDTH}}" + "".join(f"{n:>{width}}" for n in names)]
    lines.append("-" * len(lines[1]))
    for k in keys:
        cells = "".join(f"{fmt(runs[n]['summary'].get(k, {}).get(metric)):>{width}}" for n in names)
        lines.append(f"{k:<{LABEL_WIDTH}}{cells}")
    lat = "".join(f"{fmt(runs[n]['summary'].get('ALL', {}).get('lat_p50_ms'), True):>{width}}" for n in names)
    lines.append(f"{'p50 latency ms':<{LABEL_WIDTH}}{lat}")
    return "\n".join(lines)
