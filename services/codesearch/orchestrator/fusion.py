"""Weighted reciprocal rank fusion across legs, by a chunk identity that survives different chunkings.

Legs cut code differently (a chunk, a definition span, a single matching line). Two hits are the same result
when they are in the same file and their line spans overlap; the first hit seen for a place (legs in order of
weight) names it. Scores: Σ wᵢ / (k + rankᵢ + 1) in native code, then multiplicative boosts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from codesearch import _native
from codesearch.v1 import common_pb2

CENTRALITY_SLOPE = 0.3  # boost = min(1 + 0.3·ln(1 + c), CENTRALITY_CAP): hubs rise, but never dominate
CENTRALITY_CAP = 1.5
DEMOTE_GENERATED = 0.5  # generated, vendored, built or minified code is rarely what anyone is looking for
DEMOTE_TESTS = 0.8  # tests mention everything they test; demote them unless the query is about tests
# The 2nd hit of a file keeps 85%, the 3rd 72%: diversity without hiding a hot file. Measured on the tune half
# (auto, MRR@10 concept): 0.7 → 0.923, 0.85 → 0.931, no decay → 0.929.
PER_FILE_DECAY = 0.85
MAX_PER_FILE = 3  # beyond this many chunks of one file, the rest add nothing a reader would not open anyway

GENERATED_PATH = re.compile(
    r"(^|/)(vendor|third_party|node_modules|dist|build|target|generated|gen)/|_pb2(_grpc)?\.py$|\.pb\.go$|\.min\.(js|css)$|\.generated\.",
)
TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.(go|py)$|\.(test|spec)\.[jt]sx?$"
)


@dataclass
class FusedHit:
    key: str
    hit: common_pb2.Hit  # the representative hit (location, snippet...) of the place
    score: float
    leg_scores: list[common_pb2.LegScore] = field(default_factory=list)
    found_by: list[int] = field(default_factory=list)
    boosts: list[common_pb2.Boost] = field(default_factory=list)


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


def fuse(lists: list[tuple[int, float, list[common_pb2.Hit]]], k: float) -> list[FusedHit]:
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


def apply_boosts(hits: list[FusedHit], centrality: list[float], query_mentions_tests: bool) -> list[FusedHit]:
    """Centrality boost, path demotions and per-file decay; returns hits re-sorted by the boosted score."""
    for f, c in zip(hits, centrality, strict=True):
        if c > 0:
            factor = min(1 + CENTRALITY_SLOPE * math.log1p(c), CENTRALITY_CAP)
            f.score *= factor
            f.boosts.append(common_pb2.Boost(name="centrality", factor=factor))
        path = f.hit.location.path
        if GENERATED_PATH.search(path):
            f.score *= DEMOTE_GENERATED
            f.boosts.append(common_pb2.Boost(name="generated_path", factor=DEMOTE_GENERATED))
        if not query_mentions_tests and TEST_PATH.search(path):
            f.score *= DEMOTE_TESTS
            f.boosts.append(common_pb2.Boost(name="test_path", factor=DEMOTE_TESTS))
    hits.sort(key=lambda f: (-f.score, f.key))
    per_file: dict[tuple[str, str], int] = {}
    kept = []
    for f in hits:
        loc = f.hit.location
        n = per_file.get((loc.repository, loc.path), 0)
        per_file[(loc.repository, loc.path)] = n + 1
        if n >= MAX_PER_FILE:
            continue
        if n:
            factor = PER_FILE_DECAY**n
            f.score *= factor
            f.boosts.append(common_pb2.Boost(name="file_decay", factor=factor))
        kept.append(f)
    kept.sort(key=lambda f: (-f.score, f.key))
    return kept
