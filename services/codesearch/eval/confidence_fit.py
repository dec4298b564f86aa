"""Refit the response's confidence (ranking/confidence.py) on signals that hold across repositories.

Features come from the offline ranking (eval/offline.py, the server's own fusion and signals) over leg dumps;
the label is "the top hit is right" (hit@1). Fitted on the polyglot FIT repositories plus the stdlib sets' tune
halves; AUROC reported on the held-out repositories (per category) and the stdlib check halves:

  python -m codesearch.eval.confidence_fit --polyglot ../shared/eval/polyglot --legs legs.jsonl \\
      --stdlib-legs dev=std-legs-dev.jsonl --stdlib-legs semantic=std-legs-semantic.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from codesearch.eval.calibration import auroc
from codesearch.eval.metrics import score_one
from codesearch.eval.offline import QueryLegs, Variant, keyword_hits, load_legs, rank_one
from codesearch.eval.polyglot import HELD_OUT_REPOS, load_set, score_query
from codesearch.eval.runfile import load_queries, select_half
from codesearch.orchestrator.ranking import adaptive, signals
from codesearch.orchestrator.ranking.confidence import CONF_WEIGHTS, FEATURES, features
from codesearch.orchestrator.router import classify

ROUTED = Variant("routed", routed=True, k=40.0)
REGULARISATION_C = 1.0  # sklearn's default; 0.1 and 10 moved held-out AUROC by under 0.01


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
    x = features(ranked, q.query)
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


def main(argv: Sequence[str] | None = None) -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--polyglot", required=True)
    ap.add_argument("--legs", required=True, help="polyglot legs.jsonl")
    ap.add_argument("--stdlib-legs", action="append", default=[], metavar="QUERIES.jsonl=LEGS.jsonl")
    args = ap.parse_args(argv)
    pset = load_set(args.polyglot)
    by_id = {q.qid: q for q in pset.queries}
    train: list[tuple[list[float], bool]] = []
    test: dict[str, list[tuple[list[float], bool]]] = {}
    for q in load_legs(args.legs):
        out = row(q)
        if out is None:
            continue
        pq = by_id[q.qid]
        y = score_query(pq, out[1])["hit1"] > 0
        if pq.repo in HELD_OUT_REPOS:
            test.setdefault(f"held-out/{pq.category}", []).append((out[0], y))
            test.setdefault("held-out", []).append((out[0], y))
        else:
            train.append((out[0], y))
    for spec in args.stdlib_legs:
        qpath, _, lpath = spec.partition("=")
        queries = {q.id: q for q in load_queries(qpath)}
        tune = {q.id for q in select_half(list(queries.values()), "tune")}
        for q in load_legs(lpath):
            out = row(q)
            if out is None:
                continue
            y = score_one(queries[q.qid], {"results": out[1]})["hit1"] > 0
            if q.qid in tune:
                train.append((out[0], y))
            else:
                test.setdefault(f"stdlib check {qpath.rsplit('/', 1)[-1]}", []).append((out[0], y))
    from sklearn.model_selection import cross_val_score

    X, Y = [x for x, _ in train], [y for _, y in train]
    for drop in [None, *range(len(FEATURES))]:
        keep = [i for i in range(len(FEATURES)) if i != drop]
        cv = cross_val_score(
            LogisticRegression(C=REGULARISATION_C, max_iter=1000),
            [[x[i] for i in keep] for x in X],
            Y,
            cv=5,
            scoring="roc_auc",
        ).mean()
        print(f"  cv AUROC without {FEATURES[drop] if drop is not None else '-':<16} {cv:.3f}")
    model = LogisticRegression(C=REGULARISATION_C, max_iter=1000)
    model.fit([x for x, _ in train], [y for _, y in train])
    print(f"fitted on {len(train)} answers; CONF_BIAS = {model.intercept_[0]:.3f}")
    for name, w in zip(FEATURES, model.coef_[0], strict=True):
        print(f"  {name:<14} {w:+.3f}")
    for name, rows in sorted(test.items()):
        p = model.predict_proba([x for x, _ in rows])[:, 1]
        a = auroc(list(p), [y for _, y in rows])
        shipped = auroc(
            [sum(w * v for w, v in zip(CONF_WEIGHTS, x, strict=True)) for x, _ in rows], [y for _, y in rows]
        )
        print(
            f"AUROC {name:<40} refit {a if a is None else round(a, 3)}  shipped "
            f"{shipped if shipped is None else round(shipped, 3)}  (n={len(rows)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
