"""Latency of a polyglot run per category: the whole Search call as the client saw it, and the rerank stage's own
time where it ran (the run line's `rerank_ms`, from the response's rerank leg report), p50 and p99 per query.

The rerank stage's time is what reranking adds to a query; the difference of two runs' totals says the same
but carries the machine's noise twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from codesearch.eval.polyglot import CATEGORIES, SPLITS, PolyglotSet

PERCENTILES = (50, 99)


def _percentiles(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {f"p{p}": round(float(np.percentile(values, p)), 1) for p in PERCENTILES} | {"n": len(values)}


def latency(pset: PolyglotSet, run: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """{scope: {"search": {p50, p99, n}, "rerank": {p50, p99, n} | None}}; scopes ALL, each category, and each
    split half with its categories ("held-out/semantic"). Queries missing from the run are left out."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for q in pset.queries:
        rec = run.get(q.qid)
        if rec is None or "latency_ms" not in rec:
            continue
        # The fixed split names the polyglot repositories only; another set's repositories have no half.
        half = next((h for h, names in SPLITS.items() if q.repo in names), None)
        halves = (half, f"{half}/{q.category}") if half else ()
        for scope in ("ALL", q.category, *halves):
            groups.setdefault(scope, []).append(rec)
    order = ["ALL", *CATEGORIES, *(f"{h}{c}" for h in SPLITS for c in ("", *(f"/{c}" for c in CATEGORIES)))]
    return {
        scope: {
            "search": _percentiles([r["latency_ms"] for r in groups[scope]]),
            "rerank": _percentiles([r["rerank_ms"] for r in groups[scope] if "rerank_ms" in r]),
        }
        for scope in order
        if scope in groups
    }


def _pair(p: Mapping[str, float] | None, with_n: bool) -> str:
    if not p:
        return "-"
    return f"{p['p50']:.0f} / {p['p99']:.0f}" + (f" ({p['n']:.0f})" if with_n else "")


def format_latency(runs: Mapping[str, Mapping[str, Any]]) -> str:
    """One row per scope; per run the search call's p50 / p99 and the rerank stage's p50 / p99 (n reranked)."""
    named = {n: r["latency"] for n, r in runs.items() if r.get("latency")}
    if not named:
        return ""
    head = f"{'scope':<28}" + "".join(f"{n + ' search p50/p99':>30}{'rerank p50/p99 (n)':>26}" for n in named)
    lines = ["Latency per query, ms (the rerank stage's own time where it ran)", head, "-" * len(head)]
    scopes = list(dict.fromkeys(s for lat in named.values() for s in lat))
    for scope in scopes:
        cells = ""
        for lat in named.values():
            row = lat.get(scope) or {}
            cells += f"{_pair(row.get('search'), False):>30}{_pair(row.get('rerank'), True):>26}"
        lines.append(f"{scope:<28}{cells}")
    return "\n".join(lines)
