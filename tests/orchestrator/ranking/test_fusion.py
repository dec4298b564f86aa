"""Fusion of ranks (fuse) and of the legs' own scores (fuse_scores), and which questions get which."""

from __future__ import annotations

import pytest
from codesearch.orchestrator.ranking.fusion import fuse, fuse_scores, fuses_scores
from codesearch.v1 import common_pb2, search_pb2


def hit(path: str, start: int, end: int, leg: common_pb2.Leg, score: float) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=end)
    return common_pb2.Hit(
        location=loc, score=score, leg_scores=[common_pb2.LegScore(leg=leg, rank=0, score=score)]
    )


KW, VEC = common_pb2.LEG_KEYWORD, common_pb2.LEG_VECTOR


def lists() -> list:
    # BM25: one chunk holds the words far better than the rest. Vectors: a flat list that ranks b first.
    keyword = [hit("a.py", 1, 10, KW, 20.0), hit("b.py", 1, 10, KW, 4.0), hit("c.py", 1, 10, KW, 3.9)]
    vector = [hit("b.py", 2, 8, VEC, 0.62), hit("c.py", 1, 5, VEC, 0.61), hit("a.py", 3, 4, VEC, 0.60)]
    return [(KW, 0.435, keyword), (VEC, 0.304, vector)]


def test_scores_keep_a_lead_that_ranks_flatten() -> None:
    by_rank = fuse(lists(), 40.0)
    by_score = fuse_scores(lists(), 40.0)
    # Ranks: a is first for BM25 and third for vectors; b second and first: RRF calls it nearly a tie.
    assert by_rank[0].score - by_rank[1].score < 0.001
    assert [f.hit.location.path for f in by_score] == ["a.py", "b.py", "c.py"]
    total = 0.435 + 0.304
    assert by_score[0].score == pytest.approx((0.435 * 1.0 + 0.304 * 0.60 / 0.62) / total)
    assert by_score[1].score == pytest.approx((0.435 * 4.0 / 20.0 + 0.304 * 1.0) / total)
    # Places, ranks and leg scores are fuse()'s: the signals and the confidence read them.
    a = by_score[0]
    assert a.key == next(f.key for f in by_rank if f.hit.location.path == "a.py")
    assert [(s.leg, s.rank, s.score) for s in a.leg_scores] == [(KW, 0, 20.0), (VEC, 2, pytest.approx(0.60))]
    assert a.found_by == [KW, VEC]


def test_a_place_found_by_one_leg_counts_that_leg_only() -> None:
    keyword = [hit("a.py", 1, 10, KW, 10.0), hit("d.py", 1, 3, KW, 5.0)]
    vector = [hit("a.py", 1, 2, VEC, 0.5)]
    got = {f.hit.location.path: f.score for f in fuse_scores([(KW, 1.0, keyword), (VEC, 1.0, vector)], 40.0)}
    assert got == {"a.py": pytest.approx(1.0), "d.py": pytest.approx(0.25)}


def test_a_lone_list_and_empty_lists() -> None:
    keyword = [hit("a.py", 1, 10, KW, 7.0), hit("b.py", 1, 10, KW, 3.0)]
    # A lone list keeps its own scores, as fuse() does.
    assert [f.score for f in fuse_scores([(KW, 1.0, keyword)], 40.0)] == [7.0, 3.0]
    assert fuse_scores([], 40.0) == []
    # A leg whose best score is not positive adds nothing (and never divides by zero).
    flat = [hit("z.py", 1, 1, VEC, 0.0)]
    got = fuse_scores([(KW, 1.0, keyword), (VEC, 1.0, flat)], 40.0)
    assert [f.hit.location.path for f in got] == ["a.py", "b.py", "z.py"]
    assert got[-1].score == 0.0


def test_which_questions_fuse_scores() -> None:
    assert fuses_scores(search_pb2.INTENT_UNDERSTAND_CODE, specific=False)
    assert not fuses_scores(search_pb2.INTENT_UNDERSTAND_CODE, specific=True)  # a long description: ranks
    assert not fuses_scores(search_pb2.INTENT_FIND_DEFINITION, specific=False)  # names: ranks
