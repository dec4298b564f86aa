"""Candidate confidence features: each reads the answer the server's offline ranking gives and its legs."""

from __future__ import annotations

from codesearch.eval.confidence_candidates import CANDIDATES, first_file
from codesearch.eval.offline import ROUTED, QueryLegs, rank_one
from codesearch.orchestrator.ranking.fusion import fuse
from codesearch.v1 import common_pb2


def _hit(path: str, start: int, snippet: str = "", score: float = 1.0) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=start + 9)
    return common_pb2.Hit(location=loc, score=score, snippet=snippet)


KEYWORD = [_hit("router.go", 1), _hit("tree.go", 1), _hit("mux.go", 1)]


def test_legs_agree_reads_each_legs_own_first_file() -> None:
    same = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.5, [_hit("router.go", 40)])], 40
    )
    # The vector leg's first hit is in another file than the keyword leg's, though it also found router.go.
    other = fuse(
        [
            (common_pb2.LEG_KEYWORD, 1.0, KEYWORD),
            (common_pb2.LEG_VECTOR, 0.5, [_hit("tree.go", 1), _hit("router.go", 40)]),
        ],
        40,
    )
    alone = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD)], 40)  # the direct path: nothing to disagree with
    assert first_file(other, common_pb2.LEG_VECTOR) == ("r", "tree.go")
    assert first_file(alone, common_pb2.LEG_VECTOR) is None
    q = QueryLegs("q", "how are routes matched", KEYWORD, [], [], [])  # the legs themselves are not read here
    agree, first_agree = CANDIDATES["legs_agree"], CANDIDATES["legs_first_agree"]
    assert agree(same, q) == first_agree(same, q) == 1.0
    assert agree(other, q) == first_agree(other, q) == 0.0
    assert agree(alone, q) == 1.0 and first_agree(alone, q) == 0.0


def test_robustness_reads_whether_the_top_file_survives_a_changed_answer() -> None:
    """Over the server's own routing, fusion and signals (offline.rank_one): a.go is first either way, but only
    when the keyword leg also put it first does it stay first without the vector leg."""
    query = "how are routes matched against the request path"
    vector = [_hit("a.go", 1, "y"), _hit("c.go", 1, "w")]
    agreeing = QueryLegs("q", query, [_hit("a.go", 1, "y", 2.0), _hit("b.go", 1, "x")], vector, [], [])
    carried = QueryLegs("q", query, [_hit("b.go", 1, "x", 2.0), _hit("a.go", 1, "y")], vector, [], [])
    for legs, kept in ((agreeing, 1.0), (carried, 0.0)):
        fused = rank_one(legs, ROUTED)
        assert fused[0].hit.location.path == "a.go"
        assert CANDIDATES["first_without_vector"](fused, legs) == kept
        # A flatter RRF keeps the file both legs found first.
        assert CANDIDATES["first_at_k80"](fused, legs) == 1.0
        assert CANDIDATES["first_without_each_word"](fused, legs) == 1.0  # no word is in a path or a name
    single = QueryLegs("q", "Router", KEYWORD, [], [], [])
    assert CANDIDATES["first_without_each_word"](rank_one(single, ROUTED), single) == 1.0  # nothing to drop
    routes = [_hit("routes.go", 1, "x"), _hit("a.go", 1, "y", 2.0)]
    worded = QueryLegs("q", "routes matched", [*routes], [], [], [])
    fused = rank_one(worded, ROUTED)
    # "routes" names routes.go (a path word): dropped, the other file comes back first.
    assert fused[0].hit.location.path == "routes.go"
    assert CANDIDATES["first_without_each_word"](fused, worded) == 0.5


def test_place_before_signals_reads_where_the_legs_alone_put_the_top_file() -> None:
    """The legs rank b.go above a.go; the answer given leads with a.go: its place before the signals is second."""
    legs = QueryLegs(
        "q", "how are routes matched", [_hit("b.go", 1, "x", 2.0), _hit("a.go", 1, "y")], [], [], []
    )
    place = CANDIDATES["place_before_signals"]
    assert place(fuse([(common_pb2.LEG_KEYWORD, 1.0, [_hit("a.go", 1)])], 40), legs) == 0.5
    assert place(fuse([(common_pb2.LEG_KEYWORD, 1.0, [_hit("b.go", 1)])], 40), legs) == 1.0
    assert place(fuse([(common_pb2.LEG_KEYWORD, 1.0, [_hit("z.go", 1)])], 40), legs) == 0.0
