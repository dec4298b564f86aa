"""Differences between two eval summaries, per run, class and metric; classes that got worse are flagged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from codesearch.eval.report import LABEL_WIDTH, fmt

# An MRR/hit/recall drop smaller than this is noise (one query of 100 moves MRR by up to 0.01); beyond, flag it.
DEFAULT_TOLERANCE = 0.01
# (key, header, higher_is_better); latency is shown but never flagged: it depends on the machine's load.
METRICS = (
    ("hit1", "hit@1", True),
    ("hit10", "hit@10", True),
    ("mrr10", "MRR@10", True),
    ("recall10", "R@10", True),
    ("recall10cap", "R@10cap", True),
    ("ndcg10", "nDCG@10", True),
    ("zero", "zero", False),
    ("lat_p50_ms", "p50ms", False),
)
FLAGGED = frozenset({"hit1", "hit10", "mrr10", "recall10", "recall10cap", "ndcg10", "zero"})
CELL = 9


@dataclass(frozen=True)
class Regression:
    run: str
    row: str
    metric: str
    before: float
    after: float


def pair_runs(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Runs of the same name; two single-run files are paired whatever their names."""
    common = [n for n in a if n in b]
    if common:
        return [(n, n) for n in common]
    if len(a) == 1 and len(b) == 1:
        return [(next(iter(a)), next(iter(b)))]
    return []


def _delta(before: Any, after: Any) -> float | None:
    if isinstance(before, (int, float)) and isinstance(after, (int, float)):
        return float(after) - float(before)
    return None


def find_regressions(
    a: Mapping[str, Any], b: Mapping[str, Any], tolerance: float = DEFAULT_TOLERANCE, variants: bool = False
) -> list[Regression]:
    out: list[Regression] = []
    for na, nb in pair_runs(a, b):
        ra, rb = a[na]["summary"], b[nb]["summary"]
        for row in ra:
            if row not in rb or ("/" in row and not variants):
                continue
            for key, _, higher in METRICS:
                d = _delta(ra[row].get(key), rb[row].get(key))
                if key in FLAGGED and d is not None and (-d if higher else d) > tolerance:
                    out.append(
                        Regression(nb if na == nb else f"{na} -> {nb}", row, key, ra[row][key], rb[row][key])
                    )
    return out


def format_comparison(
    a: Mapping[str, Any], b: Mapping[str, Any], tolerance: float = DEFAULT_TOLERANCE, variants: bool = False
) -> str:
    lines: list[str] = []
    pairs = pair_runs(a, b)
    if not pairs:
        return f"no runs to compare: A has {sorted(a)}, B has {sorted(b)}"
    worse = {(r.run, r.row) for r in find_regressions(a, b, tolerance, variants)}
    for na, nb in pairs:
        label = nb if na == nb else f"{na} -> {nb}"
        ra, rb = a[na]["summary"], b[nb]["summary"]
        hdr = f"{'class (B - A)':<{LABEL_WIDTH}}" + "".join(f"{h:>{CELL}}" for _, h, _ in METRICS) + "  "
        lines += ["", f"run: {label}", hdr, "-" * len(hdr)]
        for row in ra:
            if row not in rb or ("/" in row and not variants):
                continue
            cells = ""
            for key, _, _ in METRICS:
                d = _delta(ra[row].get(key), rb[row].get(key))
                cells += (
                    f"{'-' if d is None else f'{d:+.3f}' if key != 'lat_p50_ms' else f'{d:+.1f}':>{CELL}}"
                )
            mark = "  WORSE" if (label, row) in worse else ""
            lines.append(f"{row:<{LABEL_WIDTH}}{cells}{mark}")
        lines.append(
            f"{'MRR@10 A / B (ALL)':<{LABEL_WIDTH}}{fmt(ra.get('ALL', {}).get('mrr10')):>{CELL}}"
            f"{fmt(rb.get('ALL', {}).get('mrr10')):>{CELL}}"
        )
    only_a = sorted(set(a) - {p[0] for p in pairs})
    only_b = sorted(set(b) - {p[1] for p in pairs})
    if only_a or only_b:
        lines.append(f"\nnot compared: only in A {only_a}, only in B {only_b}")
    n = len(worse)
    lines.append(
        f"\n{n} class row(s) worse by more than {tolerance:g}"
        if n
        else f"\nno class worse by more than {tolerance:g}"
    )
    return "\n".join(lines).lstrip("\n")
