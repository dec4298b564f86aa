"""Fusion across legs, by a chunk identity that survives different chunkings.

Legs cut code differently (a chunk, a definition span, a single matching line). Two hits are the same result
when they are in the same file and their line spans overlap; the first hit seen for a place (legs in order of
weight) names it. Scores: weighted reciprocal rank fusion, Σ wᵢ / (k + rankᵢ + 1) in native code, or for routed
meaning questions the legs' own scores, each over its list's best (fuse_scores); boosts and penalties apply
afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from codesearch import _native
from codesearch.v1 import common_pb2, search_pb2

# RRF's k per preset: a smaller k gives the top ranks of each leg more say.
RRF_K: dict[int, float] = {
    search_pb2.PRESET_QUICK: 40.0,
    search_pb2.PRESET_DEFAULT: 40.0,
    search_pb2.PRESET_THOROUGH: 60.0,
}
DEFAULT_RRF_K = 40.0  # a preset missing from RRF_K
NAIVE_RRF_K = 60.0  # the textbook constant, for the naive baseline

# One leg's answer as fusion reads it: (leg, weight, hits best first).
Leg: TypeAlias = common_pb2.Leg  # a leg value, as the generated stubs type it
RankedList = tuple[Leg, float, list[common_pb2.Hit]]


@dataclass
class FusedHit:
    key: str
    hit: common_pb2.Hit  # the representative hit (location, snippet...) of the place
    score: float
    leg_scores: list[common_pb2.LegScore] = field(default_factory=list)
    found_by: list[Leg] = field(default_factory=list)
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


# Meaning questions fuse the legs' scores instead of their ranks: Σ wᵢ × scoreᵢ / the best score of leg i's list
# (BM25, cosine). RRF at k 40 gives BM25's first hit 1/41 against 1/51 for its eleventh, however far apart their
# scores are; a question whose words one chunk holds far better than the rest should keep that lead, and the
# vector leg's cosines (its first 50 within ~0.65-1.0 of its best) then count mostly as "found by meaning".
# Chosen on the polyglot FIT repositories, offline replay of the server's legs (codesearch_lab/offline.py,
# static tier, word stems), NDCG@10 fit / held-out against RRF's 0.907 / 0.888: the legs' scores over their
# best 0.914 / 0.896; min-max scaled 0.900 / 0.884; RRF and scores blended 0.5 / 0.5 0.912 / 0.891, 0.2 / 0.8
# 0.913 / 0.894; the vector leg's weight x0.7 / x1.3 0.913 / 0.909; its share squared 0.913. Names keep RRF
# (their fit symbol class 1.000 -> 0.988 with scores), and long descriptions (Query.is_specific) too: the
# stdlib paraphrase set nDCG@10 0.320 -> 0.291 with scores, where the vector leg leads.
SCORE_FUSION_INTENTS = frozenset({search_pb2.INTENT_UNDERSTAND_CODE})


def fuses_scores(intent: int, specific: bool) -> bool:
    """A routed meaning question that is not a long description fuses scores (fuse_scores), others ranks."""
    return intent in SCORE_FUSION_INTENTS and not specific


def fuse_for(strategy: int, lists: list[RankedList], k: float) -> list[FusedHit]:
    """The plan's fusion: the legs' scores under STRATEGY_SCORE_FUSION, their ranks otherwise."""
    return (fuse_scores if strategy == search_pb2.STRATEGY_SCORE_FUSION else fuse)(lists, k)


def fuse_scores(lists: list[RankedList], k: float) -> list[FusedHit]:
    """Like fuse(), with each place's score Σ wᵢ × scoreᵢ / maxᵢ over the legs that found it (ranks and leg
    scores kept for the signals and the confidence). A lone list keeps its own scores, as fuse() does."""
    fused = fuse(lists, k)
    if len(lists) < 2:
        return fused
    weight: dict[int, float] = {}
    for leg, w, _hits in lists:
        weight[leg] = weight.get(leg, 0.0) + w
    best: dict[int, float] = {}  # each leg's best score, read from the places fuse() scored
    for f in fused:
        for s in f.leg_scores:
            best[s.leg] = max(best.get(s.leg, 0.0), s.score)
    total = sum(weight.values()) or 1.0
    for f in fused:
        f.score = (
            sum(
                weight[s.leg] * max(s.score, 0.0) / best[s.leg]
                for s in f.leg_scores
                if best.get(s.leg, 0.0) > 0
            )
            / total
        )
    fused.sort(key=lambda f: -f.score)
    return fused


def _leg_score(hit: common_pb2.Hit, leg: Leg) -> float:
    for s in hit.leg_scores:
        if s.leg == leg:
            return s.score
    return hit.score
