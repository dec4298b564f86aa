"""The confidence that the top hit is right: logistic models over signals of the answer itself."""

from __future__ import annotations

import math

from codesearch.orchestrator.query import QueryLike, as_query
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.v1 import common_pb2, search_pb2

# Answers ranked by ranking/signals.py get one of two logistic models over FEATURES, "the top hit is right" (hit@1),
# both refit with eval/confidence_fit.py (deleted on issue 46; `git show bee4610:services/codesearch/eval/confidence_fit.py`; sklearn LogisticRegression, C=1) over the offline ranking of the legs
# with the static vector tier (services/RESULTS.md, "What each ranking signal buys").
# Names (INTENT_FIND_DEFINITION): fitted on the polyglot FIT repositories and the stdlib sets' tune halves, features
# chosen by forward selection on 5-fold cross-validation (CV 0.885); nearly always right (1 wrong of 34 fit
# answers), so it is kept as fitted. vector_rank came after it: weight 0.
CONF_BIAS = -0.433
# One per FEATURES entry, in order.
CONF_WEIGHTS: tuple[float, ...] = (2.237, 1.601, 1.027, 1.647, 0.954, -2.936, 0.0, 0.0)
# Sentence questions (every intent but a name): fitted on the 57 development repositories (polyglot + blind), the
# answers as the server ranks them replayed from a leg dump, by `python -m codesearch_lab.calibration` (sklearn
# LogisticRegression, C=1; recipe in services/codesearch_lab/README.md). Scored on held-out folds by repository
# against the model it replaced (fitted on the polyglot fit half and the stdlib sets, then Platt-mapped to the 57):
# AUROC 0.769 -> 0.812, paired +0.043 [+0.019, +0.067] (architecture 0.743 -> 0.764, semantic 0.689 -> 0.764), ECE
# 0.020 -> 0.018. keyword_rank is what lifts it (held-out 0.779 without it): BM25 and the ranking agreeing on the
# file. A probability as fitted: no cap and no map after it.
SENTENCE_BIAS = -1.882
SENTENCE_WEIGHTS: tuple[float, ...] = (1.836, 0.898, 1.903, 1.503, 0.305, -0.275, 1.065, 1.288)
FEATURES = (
    "margin",  # relative margin between the first two scores: a clear winner is usually right
    "defines",  # the top hit defines the name the query asks about (signals.py)
    "file_share",  # share of the first results in the top hit's file: the answer's file is not in doubt
    "margin_to_fifth",  # the top score's lead over the fifth: a flat head means several plausible answers
    "vector_agrees",  # the vector leg put a chunk of the top hit's file in its first VECTOR_HEAD: meaning agrees
    "query_length",  # the query's content words / QUERY_LENGTH_CAP: a long description is harder to place
    "vector_rank",  # 1 / (1 + the vector leg's best rank of a chunk of the top hit's file); 0 when it has none
    "keyword_rank",  # the same for the keyword leg: BM25 agrees on the file
)
VECTOR_HEAD = 5  # the vector leg's first hits that count as agreeing (5 and 3 gave the same CV AUROC)
QUERY_LENGTH_CAP = 12  # content words beyond this add no doubt (stdlib paraphrases reach 16)
# The model for answers the signals did not rank (exact matches, references, impact, "where is X defined", quoted
# docstrings): fit (sklearn LogisticRegression, C=1) on the stdlib dev and paraphrase sets' tune halves, AUROC
# 0.953 on their check halves; it reads which leg answered and the direct path, which decide those classes.
EXACT_BIAS = -2.699
EXACT_MARGIN = 1.26  # relative margin between the first two fused scores
EXACT_AGREEMENT = 0.256  # share of the legs that answered which also found the top hit
EXACT_INTENT = 0.657  # the router's confidence in the intent
EXACT_DIRECT = 2.246  # one structural leg answered a confidently recognised question (where is X defined...)
# The top hit came from an exact leg: definitions, call sites, dependents, a literal match.
EXACT_STRUCTURAL = 2.609
EXACT_COVERAGE = 4.019  # share of the query's words in the keyword leg's top hit (adaptive.py)
EXACT_LEGS = frozenset(
    {common_pb2.LEG_DEFINITION, common_pb2.LEG_REFERENCES, common_pb2.LEG_IMPACT, common_pb2.LEG_TRIGRAM}
)
FILE_SHARE_DEPTH = 10  # the results a reader sees: how many of them are in the top hit's file


def features(fused: list[FusedHit], query: QueryLike = "") -> list[float]:
    """The signals of FEATURES, in order, for a non-empty answer to `query`."""
    top = fused[0].score
    second = fused[1].score if len(fused) > 1 else 0.0
    fifth = fused[min(4, len(fused) - 1)].score
    head = fused[:FILE_SHARE_DEPTH]
    top_file = (fused[0].hit.location.repository, fused[0].hit.location.path)
    in_top_file = [f for f in fused if (f.hit.location.repository, f.hit.location.path) == top_file]
    vector_best = _best_rank(in_top_file, common_pb2.LEG_VECTOR)
    keyword_best = _best_rank(in_top_file, common_pb2.LEG_KEYWORD)
    return [
        (top - second) / top if top > 0 else 0.0,
        float(any(b.name == "defines_query_name" for b in fused[0].boosts)),
        sum(1 for f in head if (f.hit.location.repository, f.hit.location.path) == top_file) / len(head),
        (top - fifth) / top if top > 0 else 0.0,
        float(vector_best is not None and vector_best < VECTOR_HEAD),
        min(len(as_query(query).words), QUERY_LENGTH_CAP) / QUERY_LENGTH_CAP,
        0.0 if vector_best is None else 1 / (1 + vector_best),
        0.0 if keyword_best is None else 1 / (1 + keyword_best),
    ]


def _best_rank(hits: list[FusedHit], leg: int) -> int | None:
    """The best rank `leg` gave any of `hits`, or None when it found none of them."""
    ranks = [s.rank for f in hits for s in f.leg_scores if s.leg == leg]
    return min(ranks) if ranks else None


def confidence(
    fused: list[FusedHit],
    intent_confidence: float,
    keyword_coverage: float,
    ranked_by_signals: bool,
    direct: bool = False,
    legs_answered: frozenset[int] = frozenset(),
    query: QueryLike = "",
    sentence: bool = True,
) -> float:
    """Probability that the top hit is right, from signals of the answer itself (never from how many hits):
    for answers ranked by ranking/signals.py the sentence model (a meaning question) or the names' model, the
    exact-leg model for the others."""
    if not fused:
        return 0.0
    if ranked_by_signals:
        return signal_confidence(features(fused, query), sentence)
    return sigmoid(_exact_logit(fused, intent_confidence, keyword_coverage, direct, legs_answered))


def is_sentence(intent: int) -> bool:
    """A meaning question gets the sentence model; a name (INTENT_FIND_DEFINITION) the names' model."""
    return intent != search_pb2.INTENT_FIND_DEFINITION


def signal_confidence(x: list[float], sentence: bool) -> float:
    """The confidence of a signal-ranked answer from its FEATURES (the refit tool scores the shipped model so)."""
    if sentence:
        return sigmoid(SENTENCE_BIAS + sum(w * v for w, v in zip(SENTENCE_WEIGHTS, x, strict=True)))
    return sigmoid(CONF_BIAS + sum(w * v for w, v in zip(CONF_WEIGHTS, x, strict=True)))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def _exact_logit(
    fused: list[FusedHit],
    intent_confidence: float,
    coverage: float,
    direct: bool,
    legs_answered: frozenset[int],
) -> float:
    top = fused[0].score
    second = fused[1].score if len(fused) > 1 else 0.0
    margin = (top - second) / top if top > 0 else 0.0
    found = [leg for leg in fused[0].found_by if leg in legs_answered]
    agreement = len(found) / len(legs_answered) if legs_answered else 0.0
    structural = bool({s.leg for s in fused[0].leg_scores} & EXACT_LEGS)
    return (
        EXACT_BIAS
        + EXACT_MARGIN * margin
        + EXACT_AGREEMENT * agreement
        + EXACT_INTENT * intent_confidence
        + EXACT_DIRECT * float(direct)
        + EXACT_STRUCTURAL * float(structural)
        + EXACT_COVERAGE * coverage
    )
