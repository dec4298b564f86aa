"""Pure-Python weighted reciprocal rank fusion: the references the native `codesearch._native.fuse` and
`codesearch._native.fuse_compact` must equal.

score(id) = sum over lists i containing id of weights[i] / (k + rank_i + 1), rank 0-based, summed in list
order (the native code sums in the same order, so the floats are identical). An id repeated within one
list counts at its first (best) rank. Order: score descending, then best rank in any list, then id.
"""

from __future__ import annotations

import math
import sys
from array import array


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


def fuse_compact_reference(
    lists: list[list[str]], weights: list[float], k: float
) -> tuple[list[str], list[float], bytes]:
    """(ids best first, scores, ranks): ranks is a flat little-endian int32 table of len(ids) * len(lists),
    row i = the ranks of ids[i] in each list, -1 where a list lacks the id."""
    fused = fuse_reference(lists, weights, k)
    ranks = array("i")
    for _id, _score, doc_ranks in fused:
        ranks.extend(doc_ranks)
    if sys.byteorder == "big":
        ranks.byteswap()
    return [f[0] for f in fused], [f[1] for f in fused], ranks.tobytes()
