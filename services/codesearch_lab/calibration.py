"""Refits `ranking/confidence.py`'s sentence model (SENTENCE_BIAS, SENTENCE_WEIGHTS): the probability that a
meaning question's top hit is right, from the answer's FEATURES.

    python -m codesearch_lab.calibration LEGS.jsonl --polyglot ../shared/eval/polyglot --polyglot BLIND

LEGS.jsonl is a leg dump of `codesearch eval --polyglot ... --dump-legs` (the final-test projects left out). Each
labelled question is ranked again as the server ranks it (codesearch_lab/offline.py: its plan, fusion and recipe), and its
confidence computed as the server computes it. The answers the sentence model scores (signal-ranked, a sentence
intent) get a logistic regression over FEATURES fitted inside grouped folds by repository (eval/crossval.folds)
and scored on the held-out fold; every other answer keeps the shipped model's confidence. It prints AUROC and
expected calibration error per category, shipped against held-out, the paired AUROC difference with a bootstrap
interval over repositories, and last the model fitted on every repository: the numbers to ship.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from codesearch.eval.calibration import auroc, expected_calibration_error
from codesearch.eval.crossval import folds
from codesearch.eval.polyglot import CATEGORIES, K, PolyglotSet, load_set, merge_sets, score_query
from codesearch.orchestrator.query import Query
from codesearch.orchestrator.ranking import adaptive, confidence, recipe
from codesearch.v1 import common_pb2, search_pb2
from sklearn.linear_model import LogisticRegression

from codesearch_lab import offline

REGULARISATION = 1.0  # sklearn's C; 0.3 and 3.0 moved the held-out AUROC by under 0.002
BOOTSTRAP_SAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Answer:
    repo: str
    category: str
    sentence: bool  # scored by the sentence model
    shipped: float  # the server's confidence
    features: list[float]  # confidence.FEATURES
    right: bool  # the top hit is a target (hit@1)


def answers(legs_path: str, pset: PolyglotSet) -> list[Answer]:
    """Every labelled question of the dump, ranked and scored as the server does it."""
    labelled = {q.qid: q for q in pset.queries}
    out = []
    for q in offline.load_legs(legs_path):
        label = labelled.get(q.qid)
        if label is None:
            continue
        query = Query.parse(q.query, offline.ROUTED.specific_words)
        plan, lists = offline.routed_lists(q, offline.ROUTED, query)
        fused = offline.rank_lists(
            q, offline.ROUTED, query, lists, plan.strategy, plan.route.intent, plan.routed
        )
        if not fused:
            continue
        keyword = next((hits for leg, _w, hits in lists if leg == common_pb2.LEG_KEYWORD), [])
        coverage = adaptive.keyword_coverage(query, keyword)
        signals = recipe.recipe_for(plan.route.intent, plan.routed, coverage) is recipe.SHIPPED
        sentence = confidence.is_sentence(plan.route.intent)
        shipped = confidence.confidence(
            fused,
            plan.route.confidence,
            coverage,
            ranked_by_signals=signals,
            direct=plan.strategy == search_pb2.STRATEGY_DIRECT,
            legs_answered=frozenset(leg for leg, _w, _hits in lists),
            query=query,
            sentence=sentence,
        )
        results = [
            {
                "path": f.hit.location.path,
                "start_line": f.hit.location.start_line,
                "end_line": f.hit.location.end_line,
            }
            for f in fused[:K]
        ]
        right = score_query(label, results)["hit1"] > 0
        out.append(
            Answer(
                label.repo,
                label.category,
                signals and sentence,
                shipped,
                confidence.features(fused, query),
                right,
            )
        )
    return out


def fit(rows: Sequence[Answer]) -> LogisticRegression:
    x = np.array([r.features for r in rows])
    return LogisticRegression(C=REGULARISATION, max_iter=5000).fit(x, [r.right for r in rows])


def held_out_confidences(rows: Sequence[Answer], repo_language: dict[str, str]) -> list[float]:
    """Each sentence answer scored by a model fitted without its repository's fold; the others as shipped."""
    out = [r.shipped for r in rows]
    for fold in folds(repo_language):
        inside = set(fold)
        model = fit([r for r in rows if r.sentence and r.repo not in inside])
        for i, r in enumerate(rows):
            if r.sentence and r.repo in inside:
                out[i] = float(model.predict_proba(np.array([r.features]))[0, 1])
    return out


def paired_auroc(
    rows: Sequence[Answer], before: Sequence[float], after: Sequence[float], category: str = "ALL"
) -> str:
    """after − before over `category`'s answers, with a 95% bootstrap interval over repositories."""
    repos = sorted({r.repo for r in rows})
    of = {
        name: [i for i, r in enumerate(rows) if r.repo == name and category in ("ALL", r.category)]
        for name in repos
    }
    right = [r.right for r in rows]

    def difference(idx: list[int]) -> float:
        labels = [right[i] for i in idx]
        return (auroc([after[i] for i in idx], labels) or 0.0) - (
            auroc([before[i] for i in idx], labels) or 0.0
        )

    rng = np.random.default_rng(SEED)
    samples = [
        difference([i for p in rng.choice(len(repos), len(repos)) for i in of[repos[p]]])
        for _ in range(BOOTSTRAP_SAMPLES)
    ]
    low, high = np.percentile(samples, [2.5, 97.5])
    return f"{difference([i for idx in of.values() for i in idx]):+.3f} [{low:+.3f}, {high:+.3f}]"


def table(rows: Sequence[Answer], before: Sequence[float], after: Sequence[float]) -> str:
    lines = [
        f"{'row':<14}{'n':>6}{'hit@1':>8}{'ECE shipped':>13}{'refit':>8}{'AUROC shipped':>15}{'refit':>8}"
    ]
    for name in ("ALL", *CATEGORIES):
        idx = [i for i, r in enumerate(rows) if name == "ALL" or r.category == name]
        right = [rows[i].right for i in idx]

        def figures(
            conf: Sequence[float], idx: list[int] = idx, right: list[bool] = right
        ) -> tuple[str, str]:
            pairs = [(conf[i], rows[i].right) for i in idx]
            ece, au = expected_calibration_error(pairs), auroc([c for c, _ in pairs], right)
            return ("-" if ece is None else f"{ece:.3f}"), ("-" if au is None else f"{au:.3f}")

        (e0, a0), (e1, a1) = figures(before), figures(after)
        lines.append(f"{name:<14}{len(idx):>6}{sum(right) / len(idx):>8.3f}{e0:>13}{e1:>8}{a0:>15}{a1:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("legs", help="legs.jsonl of codesearch eval --polyglot --dump-legs")
    ap.add_argument("--polyglot", action="append", required=True, help="a set folder (repeat to merge)")
    args = ap.parse_args(argv)
    pset = merge_sets([load_set(f) for f in args.polyglot])
    rows = answers(args.legs, pset)
    if not any(r.sentence for r in rows):
        print("no answer of the dump is scored by the sentence model", file=sys.stderr)
        return 1
    repo_language = {
        name: spec.language for name, spec in pset.repos.items() if any(r.repo == name for r in rows)
    }
    shipped = [r.shipped for r in rows]
    refit = held_out_confidences(rows, repo_language)
    print(
        f"{len(rows)} answers, {sum(r.sentence for r in rows)} scored by the sentence model; held-out folds:"
    )
    print(table(rows, shipped, refit))
    for name in ("ALL", *CATEGORIES):
        print(f"AUROC refit − shipped, paired, {name}: {paired_auroc(rows, shipped, refit, name)}")
    model = fit([r for r in rows if r.sentence])
    weights = ", ".join(f"{w:.3f}" for w in model.coef_[0])
    print(f"\nfitted on every repository: SENTENCE_BIAS = {model.intercept_[0]:.3f}")
    print(f"SENTENCE_WEIGHTS = ({weights})  # {', '.join(confidence.FEATURES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
