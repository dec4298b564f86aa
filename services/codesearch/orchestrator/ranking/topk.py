"""Smart TopK: how many results to return, cut where the relevant group ends."""

from __future__ import annotations

RATIO_TO_TOP = 0.15  # below 15% of the best score a hit is noise next to the top one
MAX_DROP = 0.6  # a fall of more than 60% from one hit to the next marks the end of the relevant group
MIN_RESULTS = 3  # always show a few: the top hit may be wrong and the user should see alternatives
ABSOLUTE_FLOOR = 1e-6  # a fused score this small means no leg really found it
DEFAULT_RESULTS = 20  # Smart TopK's hard maximum when the client leaves limit at 0


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


def cut(scores: list[float], limit: int) -> tuple[int, str]:
    """The cut for a request's limit: exactly `limit` when the client set one, Smart TopK up to 20 when not."""
    return smart_topk(scores, limit or DEFAULT_RESULTS, hard=bool(limit))
