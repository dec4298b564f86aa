"""The confidence that the top hit is right: a logistic model over signals of the answer itself."""

from __future__ import annotations

import math

from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.v1 import common_pb2

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
    fused: list[FusedHit],
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
