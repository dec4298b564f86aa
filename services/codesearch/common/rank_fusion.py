"""Reciprocal rank fusion of plain rankings, by the native function the search fuses its legs with
(orchestrator/ranking/fusion.py), for any part that fuses ranked lists of its own (the reranker's trainer)."""

from __future__ import annotations

from collections.abc import Sequence

from codesearch import _native


def rrf(
    rankings: Sequence[Sequence[str]], k: float, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """score(id) = sum over the rankings that hold id of weight / (k + rank + 1), rank 0-based; weights 1."""
    lists = [list(r) for r in rankings]
    ids, scores, _ranks = _native.fuse_compact(lists, list(weights) if weights else [1.0] * len(lists), k)
    return dict(zip(ids, scores, strict=True))
