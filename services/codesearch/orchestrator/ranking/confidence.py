"""The confidence that the top hit is right: a logistic model over signals of the answer itself."""

from __future__ import annotations

import math

from codesearch.orchestrator.query_terms import is_symbol_query
from codesearch.orchestrator.ranking.fusion import FusedHit

# Logistic model of "the top hit is right" (hit@1), refit with eval/confidence_fit.py (sklearn LogisticRegression,
# C=1) on the polyglot FIT repositories and the stdlib sets' tune halves, over the offline ranking of the
# keyword + graph legs. Features were kept where 5-fold cross-validation on that training set lost AUROC without
# them (0.876 with all 12 candidates; leg agreement, the direct path, an exact leg's top hit, path-word boosts
# and query length added nothing and were dropped). AUROC of the refit vs the previous model (same answers): polyglot held-out
# repositories in notes/15.md.
CONF_BIAS = -3.266
# One weight per FEATURES entry, in order. Held-out AUROC (offline, same answers): 0.775 (the previous model: 0.673);
# stdlib dev check half 0.907.
CONF_WEIGHTS: tuple[float, ...] = (2.691, 0.808, 2.898, 0.773, 1.875, -0.799, 1.541)
FEATURES = (
    "margin",  # relative margin between the first two scores: a clear winner is usually right
    "intent",  # the router's confidence in the intent
    "coverage",  # share of the query's words in the keyword leg's top hit (adaptive.py)
    "defines",  # the top hit defines the name the query asks about (signals.py)
    "file_share",  # share of the first results in the top hit's file: the answer's file is not in doubt
    "symbol_query",  # a bare name: the labelled answers include its users, so the top hit alone is less often it
    "margin_to_fifth",  # the top score's lead over the fifth: a flat head means several plausible answers
)
FILE_SHARE_DEPTH = 10  # the results a reader sees: how many of them are in the top hit's file


def features(
    fused: list[FusedHit], query: str, intent_confidence: float, keyword_coverage: float
) -> list[float]:
    """The signals of FEATURES, in order, for a non-empty answer."""
    top = fused[0].score
    second = fused[1].score if len(fused) > 1 else 0.0
    fifth = fused[min(4, len(fused) - 1)].score
    head = fused[:FILE_SHARE_DEPTH]
    top_file = (fused[0].hit.location.repository, fused[0].hit.location.path)
    return [
        (top - second) / top if top > 0 else 0.0,
        intent_confidence,
        keyword_coverage,
        float(any(b.name == "defines_query_name" for b in fused[0].boosts)),
        sum(1 for f in head if (f.hit.location.repository, f.hit.location.path) == top_file) / len(head),
        float(is_symbol_query(query)),
        (top - fifth) / top if top > 0 else 0.0,
    ]


def confidence(fused: list[FusedHit], query: str, intent_confidence: float, keyword_coverage: float) -> float:
    """Probability that the top hit is right, from signals of the answer itself (never from how many hits)."""
    if not fused:
        return 0.0
    x = features(fused, query, intent_confidence, keyword_coverage)
    z = CONF_BIAS + sum(w * v for w, v in zip(CONF_WEIGHTS, x, strict=True))
    return 1 / (1 + math.exp(-z))
