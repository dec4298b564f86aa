"""Pure-Python weighted reciprocal rank fusion: the reference the native `codesearch._native.fuse` must equal.

score(id) = sum over lists i containing id of weights[i] / (k + rank_i + 1), rank 0-based, summed in list
order (the native code sums in the same order, so the floats are identical). An id repeated within one
list counts at its first (best) rank. Order: score descending, then best rank in any list, then id.
"""

from __future__ import annotations

import math


def fuse_reference(
    lists: list[list[str]], weights: list[float], k: float
) -> list[tuple[str, float, list[int]]]:
    """(id, score, ranks) best first; ranks[i] = -1 where list i lacks the id."""
    if len(lists) != len(weights):
        raise ValueError(f"{len(lists)} lists but {len(weights)} weights")
    if not (math.isfinite(k) and k >= 0):
        raise ValueError(f"k must be a finite number >= 0, got {k}")
    for w in weights:
        if not (math.isfinite(w) and w >= 0):
            raise ValueError(f"weights must be finite and >= 0, got {w}")
    ranks: dict[str, list[int]] = {}
    for i, ids in enumerate(lists):
        for rank, doc_id in enumerate(ids):
            doc_ranks = ranks.setdefault(doc_id, [-1] * len(lists))
            if doc_ranks[i] < 0:
                doc_ranks[i] = rank
    fused: list[tuple[str, float, list[int]]] = []
    for doc_id, doc_ranks in ranks.items():
        score = 0.0
        for i, rank in enumerate(doc_ranks):
            if rank >= 0:
                score += weights[i] / (k + rank + 1)
        fused.append((doc_id, score, doc_ranks))
    fused.sort(key=lambda item: (-item[1], min(r for r in item[2] if r >= 0), item[0]))
    return fused
