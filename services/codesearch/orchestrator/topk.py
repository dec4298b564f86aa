"""Smart TopK (how many results to return) and the confidence that the top hit is right."""

from __future__ import annotations

import math
from typing import Any

from codesearch.v1 import common_pb2

RATIO_TO_TOP = 0.15  # below 15% of the best score a hit is noise next to the top one
MAX_DROP = 0.6  # a fall of more than 60% from one hit to the next marks the end of the relevant group
MIN_RESULTS = 3  # always show a few: the top hit may be wrong and the user should see alternatives
ABSOLUTE_FLOOR = 1e-6  # a fused score this small means no leg really found it


def smart_topk(scores: list[float], maximum: int, hard: bool) -> tuple[int, str]:
    """How many of the (descending) scores to keep, and why. `hard`: the client asked for exactly `maximum`."""
    n = min(len(scores), maximum)
    if hard or n == 0:
        return n, "limit" if n else "no results"
    top = scores[0]
    for i in range(1, n):
        if i < MIN_RESULTS:
            continue
        if scores[i] < ABSOLUTE_FLOOR:
            return i, "absolute floor"
        if scores[i] < top * RATIO_TO_TOP:
            return i, f"below {RATIO_TO_TOP:.0%} of the top score"
        if scores[i] < scores[i - 1] * (1 - MAX_DROP):
            return i, f"score dropped by more than {MAX_DROP:.0%}"
    return n, "maximum" if n == maximum else "all results"


# Logistic model of "the top hit is right", fit (sklearn LogisticRegression, C=1) on the dev and paraphrase sets'
# tune halves with the keyword-coverage signal (adaptive.py): AUROC 0.953 on the held-out check halves (0.911 on
# the dev check half alone). The top hit's cosine and BM25 score were dropped: with the vector leg cancelled for
# word-for-word answers, cosine fitted a negative weight (it marks the harder queries) and BM25 added 0.003.
CONF_BIAS = -2.699
CONF_MARGIN = 1.26  # relative margin between the first two fused scores: a clear winner is usually right
CONF_AGREEMENT = 0.256  # share of the legs that answered which also found the top hit
CONF_INTENT = 0.657  # the router's confidence in the intent
CONF_DIRECT = 2.246  # one structural leg answered a confidently recognised question (where is X defined...)
CONF_STRUCTURAL = (
    2.609  # the top hit came from an exact leg: definitions, call sites, dependents or a literal match
)
CONF_COVERAGE = 4.019  # share of the query's words in the keyword leg's top hit (adaptive.py)
EXACT_LEGS = frozenset(
    {common_pb2.LEG_DEFINITION, common_pb2.LEG_REFERENCES, common_pb2.LEG_IMPACT, common_pb2.LEG_TRIGRAM}
)


def confidence(
    fused: list[Any],
    intent_confidence: float,
    direct: bool,
    legs_answered: set[int],
    keyword_coverage: float = 0.0,
) -> float:
    """Probability that the top hit is right, from signals of the answer itself (never from how many hits)."""
    if not fused:
        return 0.0
    top = fused[0].score
    second = fused[1].score if len(fused) > 1 else 0.0
    margin = (top - second) / top if top > 0 else 0.0
    agreement = (
        len([leg for leg in fused[0].found_by if leg in legs_answered]) / len(legs_answered)
        if legs_answered
        else 0.0
    )
    top_legs = {s.leg for s in fused[0].leg_scores}
    z = (
        CONF_BIAS
        + CONF_MARGIN * margin
        + CONF_AGREEMENT * agreement
        + CONF_INTENT * intent_confidence
        + CONF_DIRECT * float(direct)
        + CONF_STRUCTURAL * float(bool(top_legs & EXACT_LEGS))
        + CONF_COVERAGE * keyword_coverage
    )
    return 1 / (1 + math.exp(-z))
