"""Smart TopK (how many results to return) and the confidence that the top hit is right."""

from __future__ import annotations

import math
from typing import Any

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


# Logistic weights of the confidence signals. Fit by hand on the dev set; see the orchestrator issue note.
CONF_BIAS = -2.0
CONF_MARGIN = 3.0  # relative margin between the first two hits
CONF_AGREEMENT = 1.5  # share of the legs asked that found the top hit
CONF_INTENT = 2.0  # the router's confidence in the intent


def confidence(fused: list[Any], intent_confidence: float) -> float:
    """Probability-like confidence that the top hit is right, from margin, leg agreement and intent."""
    if not fused:
        return 0.0
    top = fused[0].score
    second = fused[1].score if len(fused) > 1 else 0.0
    margin = (top - second) / top if top > 0 else 0.0
    legs_asked = {s.leg for f in fused for s in f.leg_scores}
    agreement = len(fused[0].found_by) / len(legs_asked) if legs_asked else 0.0
    z = CONF_BIAS + CONF_MARGIN * margin + CONF_AGREEMENT * agreement + CONF_INTENT * intent_confidence
    return 1 / (1 + math.exp(-z))
