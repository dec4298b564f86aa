"""Refits `ranking/confidence.py`'s MEANING_CALIBRATION: the map from the confidence models' output to the
probability that a meaning question's top hit is right.

    python -m codesearch_lab.calibration RUN.jsonl --polyglot ../shared/eval/polyglot --polyglot BLIND

RUN.jsonl is a routed `auto` run of `codesearch eval --polyglot` (the final-test projects left out). Its meaning
answers' confidences are mapped back through the shipped map to what the models said (`--raw` when the run came
from a server without it), then a logistic map over their logit (Platt scaling: two numbers) is fitted inside
grouped folds by repository (eval/crossval.folds) and scored on the held-out fold: expected calibration error and
AUROC per category, before and after. Last it prints the map fitted on every repository: the two numbers to ship.
A monotone map keeps the order of the answers within a fold, so AUROC moves only across folds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from codesearch.eval.calibration import auroc, expected_calibration_error
from codesearch.eval.crossval import folds
from codesearch.eval.polyglot import CATEGORIES, PolyglotSet, load_set, merge_sets, read_run, score_query
from codesearch.orchestrator.ranking.confidence import (
    MEANING_CALIBRATION,
    MEANING_INTENT_NAMES,
    logit,
    sigmoid,
)

FIT_STEPS = 5000  # gradient steps of the two-number fit: converged to 1e-4 well before this
FIT_RATE = 0.5


@dataclass(frozen=True)
class Answer:
    repo: str
    category: str
    meaning: bool  # a meaning question: the map applies
    confidence: float  # as the run has it
    raw_logit: float  # what the confidence models said, before the map
    right: bool  # the top hit is a target (hit@1)


def fit_platt(logits: Sequence[float], right: Sequence[bool]) -> tuple[float, float]:
    """(scale, shift) minimising the log loss of sigmoid(scale * logit + shift)."""
    x, y = np.asarray(logits), np.asarray(right, dtype=float)
    scale, shift = 1.0, 0.0
    for _ in range(FIT_STEPS):
        gap = 1 / (1 + np.exp(-(scale * x + shift))) - y
        scale -= FIT_RATE * float((gap * x).mean())
        shift -= FIT_RATE * float(gap.mean())
    return scale, shift


def answers(run_path: str, pset: PolyglotSet, raw: bool) -> list[Answer]:
    run = read_run(run_path)
    scale, shift = (1.0, 0.0) if raw else MEANING_CALIBRATION
    out = []
    for q in pset.queries:
        rec = run.get(q.qid)
        if rec is None or rec.get("confidence") is None:
            continue  # a final-test project, or a baseline's run
        p = float(rec["confidence"])
        meaning = rec.get("intent", "") in MEANING_INTENT_NAMES
        back = (logit(p) - shift) / scale if meaning else logit(p)
        right = score_query(q, rec.get("results") or [])["hit1"] > 0
        out.append(Answer(q.repo, q.category, meaning, p, back, right))
    return out


def held_out_confidences(rows: Sequence[Answer], repo_language: dict[str, str]) -> list[float]:
    """Each answer's confidence under a map fitted without its repository's fold."""
    out = [r.confidence for r in rows]
    for fold in folds(repo_language):
        inside = set(fold)
        train = [r for r in rows if r.meaning and r.repo not in inside]
        scale, shift = fit_platt([r.raw_logit for r in train], [r.right for r in train])
        for i, r in enumerate(rows):
            if r.meaning and r.repo in inside:
                out[i] = sigmoid(scale * r.raw_logit + shift)
    return out


def table(rows: Sequence[Answer], before: Sequence[float], after: Sequence[float]) -> str:
    lines = [f"{'row':<14}{'n':>6}{'hit@1':>8}{'ECE before':>12}{'after':>8}{'AUROC before':>14}{'after':>8}"]
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
        lines.append(f"{name:<14}{len(idx):>6}{sum(right) / len(idx):>8.3f}{e0:>12}{e1:>8}{a0:>14}{a1:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a routed auto run file of codesearch eval --polyglot")
    ap.add_argument("--polyglot", action="append", required=True, help="a set folder (repeat to merge)")
    ap.add_argument("--raw", action="store_true", help="the run's confidences carry no map yet")
    args = ap.parse_args(argv)
    pset = merge_sets([load_set(f) for f in args.polyglot])
    rows = answers(args.run, pset, args.raw)
    if not any(r.meaning for r in rows):
        print("no meaning answers with a confidence in the run", file=sys.stderr)
        return 1
    repo_language = {
        name: spec.language for name, spec in pset.repos.items() if any(r.repo == name for r in rows)
    }
    shipped = [sigmoid(r.raw_logit) if r.meaning else r.confidence for r in rows]
    print(f"{len(rows)} answers, {sum(r.meaning for r in rows)} of meaning questions; held-out folds:")
    print(table(rows, shipped, held_out_confidences(rows, repo_language)))
    meaning = [r for r in rows if r.meaning]
    scale, shift = fit_platt([r.raw_logit for r in meaning], [r.right for r in meaning])
    print(f"\nfitted on every repository: MEANING_CALIBRATION = ({scale:.3f}, {shift:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
