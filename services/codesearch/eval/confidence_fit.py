"""Refit the response's confidence (ranking/confidence.py) on signals that hold across repositories.

Features come from the offline ranking (eval/offline.py, the server's own fusion and signals) over leg dumps;
the label is "the top hit is right" (hit@1). Fitted on the polyglot FIT repositories plus the stdlib sets' tune
halves; chosen by cross-validation that leaves one FIT repository out (a feature must hold on a repository the
model never saw); AUROC reported on the held-out repositories (per category) and the stdlib check halves:

  python -m codesearch.eval.confidence_fit --polyglot ../shared/eval/polyglot --legs legs.jsonl \\
      --stdlib-legs dev=std-legs-dev.jsonl --stdlib-legs semantic=std-legs-semantic.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codesearch.eval.calibration import auroc
from codesearch.eval.metrics import score_one
from codesearch.eval.offline import QueryLegs, Variant, keyword_hits, load_legs, rank_one
from codesearch.eval.polyglot import HELD_OUT_REPOS, load_set, score_query
from codesearch.eval.runfile import load_queries, select_half
from codesearch.orchestrator.ranking import adaptive, signals
from codesearch.orchestrator.ranking.confidence import CONF_BIAS, CONF_WEIGHTS, FEATURES, features
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.orchestrator.router import classify
from codesearch.v1 import common_pb2

ROUTED = Variant("routed", routed=True, k=40.0)
# sklearn's default, on standardised features; 0.1 / 0.3 / 3 gave grouped-CV AUROC within 0.005 of it
REGULARISATION_C = 1.0


def first_file(fused: list[FusedHit], leg: int) -> tuple[str, str] | None:
    """The file of `leg`'s own first hit among the fused candidates (None when the leg found none of them)."""
    ranked = [
        (s.rank, (f.hit.location.repository, f.hit.location.path))
        for f in fused
        for s in f.leg_scores
        if s.leg == leg
    ]
    return min(ranked)[1] if ranked else None


def legs_agree(fused: list[FusedHit], when_one_leg: float) -> float:
    """1 when the keyword and vector legs' own first hits are in one file; `when_one_leg` when a leg found none."""
    keyword, vector = first_file(fused, common_pb2.LEG_KEYWORD), first_file(fused, common_pb2.LEG_VECTOR)
    if keyword is None or vector is None:
        return when_one_leg
    return float(keyword == vector)


# Features measured beside the shipped ones, each added alone (notes/15-confidence.md): the two legs' first files
# agree, with a lone leg counted as agreeing or not. Neither ships: + either raised grouped CV (0.829 -> 0.850 /
# 0.852) but the online dev set's AUROC fell (0.945 -> 0.905 for the first).
CANDIDATES = {
    "legs_agree": lambda fused: legs_agree(fused, when_one_leg=1.0),
    "legs_first_agree": lambda fused: legs_agree(fused, when_one_leg=0.0),
}


@dataclass(frozen=True)
class Answer:
    """One signal-ranked answer: its features, whether its top hit is right, and where it came from."""

    x: list[float]
    right: bool
    group: str  # the polyglot repository, or "stdlib:<set>"
    label: str  # the report row it counts in: "fit", "held-out/<category>", "stdlib check <set>"


def row(q: QueryLegs) -> tuple[list[float], list[dict[str, Any]]] | None:
    """The features of the offline answer and its results (None when it has none, or when the signals did not
    rank it)."""
    ranked = rank_one(q, ROUTED)
    if not ranked:
        return None
    route = classify(q.query)
    coverage = adaptive.keyword_coverage(q.query, keyword_hits(q, ROUTED))
    if not signals.applies(route.intent, coverage):
        return None  # the exact-leg model answers for these (ranking/confidence.py)
    x = features(ranked, q.query) + [feature(ranked) for feature in CANDIDATES.values()]
    results = [
        {
            "path": f.hit.location.path,
            "start_line": f.hit.location.start_line,
            "end_line": f.hit.location.end_line,
            "line": f.hit.location.start_line,
        }
        for f in ranked[:10]
    ]
    return x, results


def polyglot_answers(polyglot: str, legs: str) -> list[Answer]:
    by_id = {q.qid: q for q in load_set(polyglot).queries}
    out = []
    for q in load_legs(legs):
        ranked = row(q)
        if ranked is None:
            continue
        pq = by_id[q.qid]
        right = score_query(pq, ranked[1])["hit1"] > 0
        label = f"held-out/{pq.category}" if pq.repo in HELD_OUT_REPOS else "fit"
        out.append(Answer(ranked[0], right, pq.repo, label))
    return out


def stdlib_answers(spec: str) -> list[Answer]:
    """QUERIES.jsonl=LEGS.jsonl: the tune half trains ("tune"), the check half is reported."""
    qpath, _, lpath = spec.partition("=")
    name = qpath.rsplit("/", 1)[-1]
    queries = {q.id: q for q in load_queries(qpath)}
    tune = {q.id for q in select_half(list(queries.values()), "tune")}
    out = []
    for q in load_legs(lpath):
        ranked = row(q)
        if ranked is None:
            continue
        right = score_one(queries[q.qid], {"results": ranked[1]})["hit1"] > 0
        out.append(
            Answer(ranked[0], right, f"stdlib:{name}", "tune" if q.qid in tune else f"stdlib check {name}")
        )
    return out


def fit(train: Sequence[Answer], keep: Sequence[int]) -> tuple[float, list[float]]:
    """Standardised logistic regression, unfolded to (bias, weights) over the raw features the server computes."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    xs = np.array([[a.x[i] for i in keep] for a in train], dtype=float)
    scaler = StandardScaler().fit(xs)
    model = LogisticRegression(C=REGULARISATION_C, max_iter=2000)
    model.fit(scaler.transform(xs), [a.right for a in train])
    weights = model.coef_[0] / scaler.scale_
    bias = float(model.intercept_[0] - np.sum(weights * scaler.mean_))
    return bias, [float(w) for w in weights]


def logit(bias: float, weights: Sequence[float], x: Sequence[float], keep: Sequence[int]) -> float:
    return bias + sum(w * x[i] for w, i in zip(weights, keep, strict=True))


def grouped_cv(fit_rows: Sequence[Answer], extra: Sequence[Answer], keep: Sequence[int]) -> float | None:
    """AUROC over the FIT answers, each scored by a model fitted without its repository (`extra` always trains)."""
    scores, labels = [], []
    for repo in sorted({a.group for a in fit_rows}):
        bias, weights = fit([a for a in fit_rows if a.group != repo] + list(extra), keep)
        for a in fit_rows:
            if a.group == repo:
                scores.append(logit(bias, weights, a.x, keep))
                labels.append(a.right)
    return auroc(scores, labels)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--polyglot", required=True)
    ap.add_argument("--legs", required=True, help="polyglot legs.jsonl")
    ap.add_argument("--stdlib-legs", action="append", default=[], metavar="QUERIES.jsonl=LEGS.jsonl")
    args = ap.parse_args(argv)
    answers = polyglot_answers(args.polyglot, args.legs)
    for spec in args.stdlib_legs:
        answers += stdlib_answers(spec)
    fit_rows = [a for a in answers if a.label == "fit"]
    tune = [a for a in answers if a.label == "tune"]
    everything = list(range(len(FEATURES)))
    for drop in [None, *everything]:
        keep = [i for i in everything if i != drop]
        cv = grouped_cv(fit_rows, tune, keep)
        name = FEATURES[drop] if drop is not None else "-"
        print(f"  grouped-CV AUROC (FIT repositories) without {name:<16} {_f(cv)}")
    for i, name in enumerate(CANDIDATES, start=len(FEATURES)):
        print(
            f"  grouped-CV AUROC (FIT repositories) with {name:<19} {_f(grouped_cv(fit_rows, tune, [*everything, i]))}"
        )
    bias, weights = fit(fit_rows + tune, everything)
    print(f"fitted on {len(fit_rows) + len(tune)} answers; CONF_BIAS = {bias:.3f}")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:<16} {w:+.3f}")
    reports: dict[str, list[Answer]] = {}
    for a in answers:
        if a.label.startswith("held-out"):
            reports.setdefault("held-out", []).append(a)
        if a.label not in ("fit", "tune"):
            reports.setdefault(a.label, []).append(a)
    for name, rows in sorted(reports.items()):
        labels = [a.right for a in rows]
        refit = auroc([logit(bias, weights, a.x, everything) for a in rows], labels)
        shipped = auroc([logit(CONF_BIAS, CONF_WEIGHTS, a.x, everything) for a in rows], labels)
        print(f"AUROC {name:<40} refit {_f(refit)}  shipped {_f(shipped)}  (n={len(rows)})")
    return 0


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


if __name__ == "__main__":
    sys.exit(main())
