"""Weighted reciprocal rank fusion across legs, by a chunk identity that survives different chunkings.

Legs cut code differently (a chunk, a definition span, a single matching line). Two hits are the same result
when they are in the same file and their line spans overlap; the first hit seen for a place (legs in order of
weight) names it. Scores: Σ wᵢ / (k + rankᵢ + 1) in native code; boosts and penalties multiply afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codesearch import _native
from codesearch.v1 import common_pb2, search_pb2

# RRF's k per preset: a smaller k gives the top ranks of each leg more say.
RRF_K = {search_pb2.PRESET_QUICK: 40.0, search_pb2.PRESET_DEFAULT: 40.0, search_pb2.PRESET_THOROUGH: 60.0}
DEFAULT_RRF_K = 40.0  # a preset missing from RRF_K
NAIVE_RRF_K = 60.0  # the textbook constant, for the naive baseline

# One leg's answer as fusion reads it: (leg, weight, hits best first).
RankedList = tuple[int, float, list[common_pb2.Hit]]


@dataclass
class FusedHit:
    key: str
    hit: common_pb2.Hit  # the representative hit (location, snippet...) of the place
    score: float
    leg_scores: list[common_pb2.LegScore] = field(default_factory=list)
    found_by: list[int] = field(default_factory=list)
    boosts: list[common_pb2.Boost] = field(default_factory=list)

    def scale(self, name: str, factor: float) -> None:
        """Multiplies the score and records why (the hit's `boosts` explain its place)."""
        self.score *= factor
        self.boosts.append(common_pb2.Boost(name=name, factor=factor))


class PlaceIndex:
    """Assigns every hit a place key: same repository and path, overlapping line span → same key."""

    def __init__(self) -> None:
        self._spans: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
        self.representative: dict[str, common_pb2.Hit] = {}

    def key(self, hit: common_pb2.Hit) -> str:
        loc = hit.location
        spans = self._spans.setdefault((loc.repository, loc.path), [])
        for start, end, key in spans:
            if loc.start_line <= end and start <= loc.end_line:
                return key
        key = f"{loc.repository}\x1f{loc.path}\x1f{loc.start_line}"
        spans.append((loc.start_line, loc.end_line, key))
        self.representative[key] = hit
        return key


def rrf_k(preset: int, naive: bool) -> float:
    return NAIVE_RRF_K if naive else RRF_K.get(preset, DEFAULT_RRF_K)


def fuse(lists: list[RankedList], k: float) -> list[FusedHit]:
    """lists: (leg, weight, hits best first). Returns fused hits best first, before boosts."""
    places = PlaceIndex()
    keyed: list[list[str]] = []
    raw: list[dict[str, common_pb2.Hit]] = []
    for _leg, _w, hits in lists:
        seen: dict[str, common_pb2.Hit] = {}
        for h in hits:
            seen.setdefault(places.key(h), h)  # a place counts once per leg, at its best rank
        keyed.append(list(seen))
        raw.append(seen)
    ids, scores, rank_table = _native.fuse_compact(keyed, [w for _l, w, _h in lists], k)
    ranks = memoryview(rank_table).cast("i")  # row i: the ranks of ids[i] per list, decoded only when read
    n = len(lists)
    single = n == 1  # one list: nothing to fuse, keep the leg's own (more telling) scores
    out = []
    for i, (key, score) in enumerate(zip(ids, scores, strict=True)):
        f = FusedHit(
            key, places.representative[key], _leg_score(raw[0][key], lists[0][0]) if single else score
        )
        for (leg, _w, _h), rank, seen in zip(lists, ranks[i * n : (i + 1) * n], raw, strict=True):
            if rank >= 0:
                f.leg_scores.append(common_pb2.LegScore(leg=leg, rank=rank, score=_leg_score(seen[key], leg)))
                if leg not in f.found_by:
                    f.found_by.append(leg)
        out.append(f)
    return out


def _leg_score(hit: common_pb2.Hit, leg: int) -> float:
    for s in hit.leg_scores:
        if s.leg == leg:
            return s.score
    return hit.score
