"""Scoring, reimplemented from ../shared/eval/score.py (tests/eval/test_scoring.py checks equality), plus nDCG@10.

Correct result: for definition, exact_match, concept (and any other line-level class) same path and the span
[line, end_line] overlaps some gold [line - 3, end_line + 3]; for references and impact, same path as a gold entry.
nDCG@10 (not in score.py): binary gains; each gold target (a gold entry for line-level classes, a distinct gold
file for file-level ones) is credited once, at the first result that matches it, so duplicates earn nothing;
the ideal ranking puts min(10, targets) hits first.
"""

from __future__ import annotations

import math
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from codesearch.eval.runfile import Query

FILE_LEVEL = frozenset({"references", "impact"})  # classes judged per file, as score.py does
SLACK = 3  # lines of slack around a gold span, as score.py
K = 10  # results that count, as score.py
CLASS_ORDER = ("definition", "references", "exact_match", "concept", "impact")  # score.py's row order
RATE_KEYS = ("hit1", "hit10", "mrr10", "recall10", "recall10cap", "ndcg10", "zero")
INVALID_STATUS = "INVALID_ARGUMENT"  # a forced mode that cannot take the query: zero results, counted apart


def is_correct(klass: str, r: Mapping[str, Any], gold: Sequence[Mapping[str, Any]]) -> bool:
    p = r.get("path")
    if klass in FILE_LEVEL:
        return any(g["path"] == p for g in gold)
    try:
        lo = int(r.get("line") or 0)
        hi = int(r.get("end_line") or lo)
    except (TypeError, ValueError):
        return False
    if hi < lo:
        lo, hi = hi, lo
    return any(g["path"] == p and lo <= g["end_line"] + SLACK and hi >= g["line"] - SLACK for g in gold)


def pct(xs: Sequence[float], q: float) -> float | None:
    """score.py's percentile: the ceil(q% * n)-th smallest value."""
    if not xs:
        return None
    s = sorted(xs)
    i = min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))
    return s[i]


def _gold_matches(klass: str, r: Mapping[str, Any], gold: Sequence[Mapping[str, Any]]) -> list[int]:
    return [i for i, g in enumerate(gold) if is_correct(klass, r, [g])]


def ndcg(klass: str, top: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]) -> float:
    if klass in FILE_LEVEL:
        targets: list[Any] = sorted({g["path"] for g in gold})
    else:
        targets = list(range(len(gold)))
    if not targets:
        return 0.0
    credited: set[Any] = set()
    dcg = 0.0
    for rank, r in enumerate(top[:K]):
        if klass in FILE_LEVEL:
            fresh = [r.get("path")] if r.get("path") in targets and r.get("path") not in credited else []
        else:
            fresh = [i for i in _gold_matches(klass, r, gold) if i not in credited]
        if fresh:
            credited.add(fresh[0])
            dcg += 1.0 / math.log2(rank + 2)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(K, len(targets))))
    return dcg / ideal


def score_one(q: Query, run: Mapping[str, Any] | None) -> dict[str, float]:
    res = (run or {}).get("results") or []
    top = res[:K]
    flags = [is_correct(q.klass, r, q.gold) for r in top]
    first = next((i for i, f in enumerate(flags) if f), None)
    m: dict[str, float] = {
        "hit1": float(bool(flags and flags[0])),
        "hit10": float(first is not None),
        "mrr10": (1.0 / (first + 1)) if first is not None else 0.0,
        "ndcg10": ndcg(q.klass, top, q.gold),
        "zero": float(len(res) == 0),
        "missing": float(run is None),
    }
    if q.klass in FILE_LEVEL:
        gold_files = {g["path"] for g in q.gold}
        found = {r.get("path") for r in top} & gold_files
        m["recall10"] = len(found) / len(gold_files)
        m["recall10cap"] = len(found) / min(K, len(gold_files))
    lat = (run or {}).get("latency_ms")
    if isinstance(lat, (int, float)):
        m["latency_ms"] = float(lat)
    err = (run or {}).get("error") or ""
    m["invalid"] = float(err == INVALID_STATUS)
    m["errors"] = float(bool(err) and err != INVALID_STATUS)
    return m


def aggregate(ms: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = OrderedDict(n=len(ms))
    for k in RATE_KEYS:
        vals = [m[k] for m in ms if k in m]
        out[k] = round(sum(vals) / len(vals), 4) if vals else None
    lats = [m["latency_ms"] for m in ms if "latency_ms" in m]
    p50, p95 = pct(lats, 50), pct(lats, 95)
    out["lat_p50_ms"] = round(p50, 2) if p50 is not None else None
    out["lat_p95_ms"] = round(p95, 2) if p95 is not None else None
    out["missing"] = int(sum(m["missing"] for m in ms))
    out["invalid"] = int(sum(m.get("invalid", 0.0) for m in ms))
    out["errors"] = int(sum(m.get("errors", 0.0) for m in ms))
    return out


def summarize(queries: Sequence[Query], runs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows in score.py's --variants order: each class, then its 'class/variant' rows, then 'ALL'."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q in queries:
        m = score_one(q, runs.get(q.id))
        groups[q.klass].append(m)
        groups[q.klass + "/" + q.variant].append(m)
        groups["ALL"].append(m)
    keys = [k for k in CLASS_ORDER if k in groups]
    keys += sorted(k for k in groups if "/" not in k and k not in keys and k != "ALL")
    rows: list[str] = []
    for k in keys:
        rows.append(k)
        rows += sorted(v for v in groups if v.startswith(k + "/"))
    rows.append("ALL")
    return OrderedDict((k, aggregate(groups[k])) for k in rows)
