"""Refit the response's confidence (ranking/confidence.py) on signals that hold across repositories.

Features come from the offline ranking (eval/offline.py, the server's own fusion and signals) over leg dumps;
the label is "the top hit is right" (hit@1). Fitted on the polyglot FIT repositories plus the stdlib sets' tune
halves; chosen by cross-validation that leaves one FIT repository out (a feature must hold on a repository the
model never saw); AUROC reported on the held-out repositories (per category) and the stdlib sets:

  python -m codesearch.eval.confidence_fit --polyglot ../shared/eval/polyglot --legs poly/legs.jsonl \\
      --run poly/run-auto.jsonl \\
      --stdlib-legs ../shared/eval/dev-queries.jsonl=dev/legs.jsonl=dev/run-auto.jsonl \\
      --stdlib-legs ../shared/eval/semantic-dev.jsonl=para/legs.jsonl=para/run-auto.jsonl \\
      [--write services/codesearch/orchestrator/ranking/confidence.py]

The dumps and runs come from `codesearch eval ... --modes auto --dump-legs --out DIR` (README). The runs are
optional: with them a set's AUROC is the whole set's as the server would answer it with the refit, the answers
the signals did not rank keeping the exact-leg model's confidence from the run (the dev set's figure is about how
the two models mix: notes/c15conf2.md).
Last it prints the ceiling: a logistic model over every feature and candidate fitted on the held-out answers
themselves and scored on them, the held-out AUROC no refit of these signals can pass (a goal above it needs a new
signal, not new weights).
`--write` puts the sentence model's refit into confidence.py (SENTENCE_BIAS, SENTENCE_WEIGHTS, SENTENCE_CAP): the
one step after a ranking change, once the printed figures say it pays.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesearch.eval.calibration import auroc
from codesearch.eval.confidence_candidates import CANDIDATES
from codesearch.eval.metrics import score_one
from codesearch.eval.offline import ROUTED, QueryLegs, keyword_hits, load_legs, rank_one
from codesearch.eval.polyglot import HELD_OUT_REPOS, load_set, score_query
from codesearch.eval.runfile import load_queries, select_half
from codesearch.orchestrator.ranking import adaptive, signals
from codesearch.orchestrator.ranking.confidence import FEATURES, features, is_sentence, signal_confidence
from codesearch.orchestrator.router import classify

# sklearn's default, on standardised features; 0.1 / 0.3 / 3 gave grouped-CV AUROC within 0.005 of it
REGULARISATION_C = 1.0
# The sentence model's ceiling (sentence_model, choose_cap): the largest of these whose stdlib dev tune half,
# mixed with the exact-leg model's confidences, keeps DEV_FLOOR. A sentence answer's top file may be right while
# the stdlib labels want one function: uncapped, wrong concept answers rose above right exact-leg ones (dev
# 0.945 -> 0.894).
SENTENCE_CAPS = (1.0, 0.97, 0.95, 0.93, 0.92, 0.91, 0.90)
DEV_FLOOR = 0.94  # the stdlib dev set's AUROC a confidence change must keep (issue 15)
# FEATURES the sentence model leaves out, by backward elimination on grouped CV: vector_rank says what
# vector_agrees says and more (0.870 without it, 0.868 with both); then without margin_to_fifth 0.878.
SENTENCE_DROPS = ("vector_agrees", "margin_to_fifth")
# The ceiling's regularisation: weak, so the in-sample fit is as close as a logistic model gets to the rows.
CEILING_C = 1e4


@dataclass(frozen=True)
class Answer:
    """One signal-ranked answer: its features, whether its top hit is right, and where it came from."""

    x: list[float]
    right: bool
    group: str  # the polyglot repository, or "stdlib:<set>"
    label: str  # the report row it counts in: "fit", "held-out/<category>", "stdlib check <set>", "tune"
    qid: str = ""
    sentence: bool = True  # a meaning question (False: a name, INTENT_FIND_DEFINITION)


@dataclass
class Population:
    """A query set as the server answers it: the signal-ranked answers the refit scores, and the confidence and
    rightness of the others as a run has them (empty without a run)."""

    name: str
    answers: list[Answer]
    others: list[tuple[float, bool, str]]  # (confidence, right, label as Answer.label)
    whole: bool = False  # a run was read: the figure is the whole set's


def row(q: QueryLegs) -> tuple[list[float], list[dict[str, Any]], bool] | None:
    """The features of the offline answer, its results, and whether it answers a sentence (None when it has none,
    or when the signals did not rank it)."""
    ranked = rank_one(q, ROUTED)
    if not ranked:
        return None
    route = classify(q.query)
    coverage = adaptive.keyword_coverage(q.query, keyword_hits(q, ROUTED))
    if not signals.applies(route.intent, coverage):
        return None  # the exact-leg model answers for these (ranking/confidence.py)
    x = features(ranked, q.query) + [feature(ranked, q) for feature in CANDIDATES.values()]
    results = [
        {
            "path": f.hit.location.path,
            "start_line": f.hit.location.start_line,
            "end_line": f.hit.location.end_line,
            "line": f.hit.location.start_line,
        }
        for f in ranked[:10]
    ]
    return x, results, is_sentence(route.intent)


def _run(path: str | None, key: str) -> dict[str, dict[str, Any]]:
    if not path:
        return {}
    with open(path, encoding="utf-8") as fh:
        return {rec[key]: rec for rec in (json.loads(line) for line in fh if line.strip())}


def polyglot_answers(polyglot: str, legs: str, run: str | None = None) -> tuple[list[Answer], Population]:
    """The signal-ranked answers, and the held-out half as a population (with the run's other answers)."""
    by_id = {q.qid: q for q in load_set(polyglot).queries}
    served = _run(run, "query_id")
    out, others = [], []
    ranked_ids = set()
    for q in load_legs(legs):
        ranked = row(q)
        if ranked is None:
            continue
        pq = by_id[q.qid]
        right = score_query(pq, ranked[1])["hit1"] > 0
        label = f"held-out/{pq.category}" if pq.repo in HELD_OUT_REPOS else "fit"
        out.append(Answer(ranked[0], right, pq.repo, label, q.qid, ranked[2]))
        ranked_ids.add(q.qid)
    for qid, rec in served.items():
        pq = by_id[qid]
        if qid not in ranked_ids and pq.repo in HELD_OUT_REPOS:
            right = score_query(pq, rec["results"])["hit1"] > 0
            others.append((float(rec.get("confidence", 0.0)), right, f"held-out/{pq.category}"))
    held = Population("held-out", [a for a in out if a.label.startswith("held-out")], others, bool(served))
    return out, held


def stdlib_answers(spec: str) -> tuple[list[Answer], Population]:
    """QUERIES.jsonl=LEGS.jsonl[=RUN.jsonl]: the tune half trains ("tune"), the check half is reported; the run
    adds the answers the signals did not rank to the whole set's population."""
    qpath, lpath, rpath = ([*spec.split("="), ""])[:3]
    name = qpath.rsplit("/", 1)[-1]
    queries = {q.id: q for q in load_queries(qpath)}
    tune = {q.id for q in select_half(list(queries.values()), "tune")}
    out = []
    for q in load_legs(lpath):
        ranked = row(q)
        if ranked is None:
            continue
        right = score_one(queries[q.qid], {"results": ranked[1]})["hit1"] > 0
        label = "tune" if q.qid in tune else f"stdlib check {name}"
        out.append(Answer(ranked[0], right, f"stdlib:{name}", label, q.qid, ranked[2]))
    ranked_ids = {a.qid for a in out}
    others = [
        (
            float(rec.get("confidence", 0.0)),
            score_one(queries[qid], rec)["hit1"] > 0,
            "tune" if qid in tune else f"stdlib check {name}",
        )
        for qid, rec in _run(rpath, "id").items()
        if qid not in ranked_ids
    ]
    return out, Population(name.removesuffix(".jsonl"), out, others, bool(rpath))


def fit(
    train: Sequence[Answer],
    keep: Sequence[int],
    weight: Callable[[Answer], float] | None = None,
    c: float = REGULARISATION_C,
) -> tuple[float, list[float]]:
    """Standardised logistic regression, unfolded to (bias, weights) over the raw features the server computes."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    xs = np.array([[a.x[i] for i in keep] for a in train], dtype=float)
    scaler = StandardScaler().fit(xs)
    model = LogisticRegression(C=c, max_iter=2000)
    weights_per_answer = [weight(a) for a in train] if weight else None
    model.fit(scaler.transform(xs), [a.right for a in train], sample_weight=weights_per_answer)
    weights = model.coef_[0] / np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    bias = float(model.intercept_[0] - np.sum(weights * scaler.mean_))
    return bias, [float(w) for w in weights]


def logit(bias: float, weights: Sequence[float], x: Sequence[float], keep: Sequence[int]) -> float:
    return bias + sum(w * x[i] for w, i in zip(weights, keep, strict=True))


# A confidence model: fitted on answers, it gives each answer a probability.
Model = Callable[[Answer], float]
Fitter = Callable[[Sequence[Answer]], Model]


def one_model(keep: Sequence[int]) -> Fitter:
    """One logistic model over every signal-ranked answer (what ships)."""

    def fitter(train: Sequence[Answer]) -> Model:
        bias, weights = fit(train, keep)
        return lambda a: _sigmoid(logit(bias, weights, a.x, keep))

    return fitter


def sentence_model(keep: Sequence[int], cap: float) -> Fitter:
    """Names keep the shipped model (nearly always right: 1 wrong of 33 fit answers, none in the stdlib tune
    half, nothing to learn from); sentences get their own refit, its probability at most `cap`."""

    def fitter(train: Sequence[Answer]) -> Model:
        bias, weights = fit([a for a in train if a.sentence], keep)

        def model(a: Answer) -> float:
            if not a.sentence:
                return shipped_model(a)
            return cap * _sigmoid(logit(bias, weights, a.x, keep))

        return model

    return fitter


def grouped_cv(fit_rows: Sequence[Answer], extra: Sequence[Answer], fitter: Fitter) -> float | None:
    """AUROC over the FIT answers, each scored by a model fitted without its repository (`extra` always trains)."""
    scores, labels = [], []
    for repo in sorted({a.group for a in fit_rows}):
        model = fitter([a for a in fit_rows if a.group != repo] + list(extra))
        for a in fit_rows:
            if a.group == repo:
                scores.append(model(a))
                labels.append(a.right)
    return auroc(scores, labels)


def population_auroc(pop: Population, model: Model) -> float | None:
    """The population's AUROC with `model` scoring its signal-ranked answers (the rest as the run has them)."""
    pairs = [(model(a), a.right) for a in pop.answers] + [(c, y) for c, y, _label in pop.others]
    return auroc([c for c, _ in pairs], [y for _, y in pairs])


def choose_cap(
    fit_rows: Sequence[Answer], tune: Sequence[Answer], dev: Population | None, keep: Sequence[int]
) -> float:
    """The largest SENTENCE_CAPS value whose dev tune half (mixed with the run's exact-leg answers) keeps
    DEV_FLOOR; 1.0 (no cap) without a dev run."""
    if dev is None or not dev.others:
        return 1.0
    tune_half = Population(
        dev.name,
        [a for a in dev.answers if a.label == "tune"],
        [o for o in dev.others if o[2] == "tune"],
        dev.whole,
    )
    for cap in SENTENCE_CAPS:
        model = sentence_model(keep, cap)(list(fit_rows) + list(tune))
        value = population_auroc(tune_half, model)
        if value is not None and value >= DEV_FLOOR:
            return cap
    return SENTENCE_CAPS[-1]


def ceiling(rows: Sequence[Answer], keep: Sequence[int]) -> Model | None:
    """A logistic model over `keep` fitted on `rows` themselves (in-sample, no regularisation to speak of): scored on
    those same rows, its AUROC bounds what any refit of these features could reach there. Where the bound is below
    a goal, the goal needs a signal the features do not hold, not other weights. None when `rows` are all right or
    all wrong."""
    if len({a.right for a in rows}) < 2:
        return None
    bias, weights = fit(rows, keep, c=CEILING_C)
    return lambda a: _sigmoid(logit(bias, weights, a.x, keep))


def shipped_model(a: Answer) -> float:
    """The server's confidence for a signal-ranked answer (ranking/confidence.py)."""
    return signal_confidence(a.x[: len(FEATURES)], a.sentence)


def write_model(path: str, bias: float, weights: Sequence[float], cap: float) -> None:
    """Replaces SENTENCE_BIAS, SENTENCE_WEIGHTS (one per FEATURES entry) and SENTENCE_CAP in confidence.py."""
    if not Path(path).is_file():
        raise SystemExit(
            f"{path}: no such file (--write rewrites the constants of an existing confidence.py)"
        )
    source = Path(path).read_text(encoding="utf-8")
    numbers = ", ".join(f"{w:.3f}" for w in weights)
    replacements = {
        r"^SENTENCE_BIAS = .*$": f"SENTENCE_BIAS = {bias:.3f}",
        r"^SENTENCE_WEIGHTS: tuple\[float, \.\.\.\] = \(.*\)$": f"SENTENCE_WEIGHTS: tuple[float, ...] = ({numbers})",
        r"^SENTENCE_CAP = [0-9.]+": f"SENTENCE_CAP = {cap:.2f}",
    }
    for pattern, text in replacements.items():
        source, n = re.subn(pattern, text, source, flags=re.M)
        if n != 1:
            raise SystemExit(f"{path}: SENTENCE_BIAS / SENTENCE_WEIGHTS / SENTENCE_CAP not found once each")
    Path(path).write_text(source, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--polyglot", required=True)
    ap.add_argument("--legs", required=True, help="polyglot legs.jsonl")
    ap.add_argument("--run", help="the server's polyglot run-auto.jsonl (adds the exact-leg answers)")
    ap.add_argument(
        "--stdlib-legs", action="append", default=[], metavar="QUERIES.jsonl=LEGS.jsonl[=RUN.jsonl]"
    )
    ap.add_argument("--write", metavar="confidence.py", help="write the refit of FEATURES into this file")
    args = ap.parse_args(argv)
    answers, held = polyglot_answers(args.polyglot, args.legs, args.run)
    populations = [held]
    for spec in args.stdlib_legs:
        std, pop = stdlib_answers(spec)
        answers += std
        populations.append(pop)
    fit_rows = [a for a in answers if a.label == "fit"]
    tune = [a for a in answers if a.label == "tune"]
    dev = next((p for p in populations if p.name.startswith("dev")), None)
    everything = list(range(len(FEATURES)))
    sentence_keep = [i for i in everything if FEATURES[i] not in SENTENCE_DROPS]
    cap = choose_cap(fit_rows, tune, dev, sentence_keep)
    print(f"sentence model: FEATURES without {', '.join(SENTENCE_DROPS)}, capped at {cap:.2f}")
    for drop in [None, *sentence_keep]:
        keep = [i for i in sentence_keep if i != drop]
        cv = grouped_cv(fit_rows, tune, sentence_model(keep, cap))
        name = FEATURES[drop] if drop is not None else "-"
        print(f"  grouped-CV AUROC (FIT repositories) without {name:<24} {_f(cv)}")
    for i, name in enumerate(CANDIDATES, start=len(FEATURES)):
        cv = grouped_cv(fit_rows, tune, sentence_model([*sentence_keep, i], cap))
        print(f"  grouped-CV AUROC (FIT repositories) with {name:<27} {_f(cv)}")
    agree = [*sentence_keep, len(FEATURES) + list(CANDIDATES).index("legs_agree")]
    sentences = {
        "sentences refit": sentence_model(sentence_keep, cap),
        "sentences refit + legs_agree": sentence_model(agree, cap),
    }
    sentence_rows = [a for a in fit_rows + tune if a.sentence]
    bias, kept_weights = fit(sentence_rows, sentence_keep)
    weights = [0.0] * len(FEATURES)
    for i, w in zip(sentence_keep, kept_weights, strict=True):
        weights[i] = w
    print(f"sentence model fitted on {len(sentence_rows)} answers; SENTENCE_BIAS = {bias:.3f}")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:<16} {w:+.3f}")
    models: dict[str, Model] = {
        "shipped": shipped_model,
        "one model": one_model(everything)(fit_rows + tune),
        **{name: fitter(fit_rows + tune) for name, fitter in sentences.items()},
    }
    table: dict[str, list[float | None]] = {}
    for label in ["fit", *sorted({a.label for a in answers if a.label.startswith("held-out/")})]:
        rows = [a for a in answers if a.label == label]
        table[label] = [auroc([m(a) for a in rows], [a.right for a in rows]) for m in models.values()]
    for pop in populations:
        scope = "all answers" if pop.whole else "signal-ranked"
        table[f"{pop.name} ({scope})"] = [population_auroc(pop, m) for m in models.values()]
    widths = [len(name) + 2 for name in models]
    print(
        f"{'AUROC, correct top hit':<32}"
        + "".join(f"{name:>{w}}" for name, w in zip(models, widths, strict=True))
    )
    for label, values in table.items():
        print(f"  {label:<30}" + "".join(f"{_f(v):>{w}}" for v, w in zip(values, widths, strict=True)))
    print_ceiling(answers, held)
    if args.write:
        write_model(args.write, bias, weights, cap)
        print(f"wrote SENTENCE_BIAS, SENTENCE_WEIGHTS and SENTENCE_CAP into {args.write}")
    return 0


def print_ceiling(answers: Sequence[Answer], held: Population) -> None:
    """The held-out AUROC that no refit of these features can pass: a model fitted on the held-out answers
    themselves, over FEATURES and every CANDIDATES entry, scored in-sample (per category and, with the run, the
    whole set as the server would answer it)."""
    every = list(range(len(FEATURES) + len(CANDIDATES)))
    rows = [a for a in answers if a.label.startswith("held-out/")]
    model = ceiling(rows, every)
    if model is None:
        return
    print(
        "ceiling: a logistic model over every feature and candidate, fitted on the held-out answers themselves"
    )
    for label in sorted({a.label for a in rows}):
        part = [a for a in rows if a.label == label]
        print(f"  {label:<30}{_f(auroc([model(a) for a in part], [a.right for a in part])):>9}")
    print(
        f"  {'held-out (signal-ranked)':<30}{_f(auroc([model(a) for a in rows], [a.right for a in rows])):>9}"
    )
    if held.whole:
        print(f"  {'held-out (all answers)':<30}{_f(population_auroc(held, model)):>9}")


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


if __name__ == "__main__":
    sys.exit(main())
