"""The confidence model for signal-ranked answers reads the answer and the query (ranking/confidence.py)."""

from __future__ import annotations

from codesearch.orchestrator.ranking import confidence
from codesearch.orchestrator.ranking.fusion import fuse
from codesearch.v1 import common_pb2


def hit(path: str, start: int) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=start + 9)
    return common_pb2.Hit(location=loc, score=1.0)


KEYWORD = [hit("router.go", 1), hit("tree.go", 1), hit("mux.go", 1), hit("chain.go", 1), hit("ctx.go", 1)]


def test_vector_agreement_and_query_length_are_features() -> None:
    agreeing = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.2, [hit("router.go", 40)])], 40
    )
    elsewhere = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.2, [hit("other.go", 1)])], 40
    )
    assert agreeing[0].hit.location.path == elsewhere[0].hit.location.path == "router.go"
    i_vec = confidence.FEATURES.index("vector_agrees")
    i_len = confidence.FEATURES.index("query_length")
    assert confidence.features(agreeing, "how routing works")[i_vec] == 1.0
    assert confidence.features(elsewhere, "how routing works")[i_vec] == 0.0
    assert confidence.features(agreeing, "how routing works")[i_len] == 2 / confidence.QUERY_LENGTH_CAP
    many = " ".join(f"word{i}" for i in range(40))
    assert confidence.features(agreeing, many)[i_len] == 1.0  # capped

    def conf(fused, query: str) -> float:
        return confidence.confidence(fused, 0.4, 0.3, ranked_by_signals=True, query=query)

    # The vector leg agreeing raises confidence; a long description lowers it (weights' signs, as fitted).
    assert conf(agreeing, "how routing works") > conf(elsewhere, "how routing works")
    assert conf(agreeing, "how routing works") > conf(agreeing, many)
    assert 0.0 < conf(elsewhere, many) < 1.0
    assert len(confidence.CONF_WEIGHTS) == len(confidence.FEATURES)
