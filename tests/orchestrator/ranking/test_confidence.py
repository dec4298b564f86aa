"""The confidence model for signal-ranked answers reads the answer and the query (ranking/confidence.py)."""

from __future__ import annotations

from functools import partial

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

    for sentence in (True, False):
        conf = partial(
            confidence.confidence, intent_confidence=0.4, keyword_coverage=0.3, ranked_by_signals=True
        )
        # The vector leg agreeing raises confidence; a long description lowers it (weights' signs, as fitted).
        how = "how routing works"
        assert conf(agreeing, query=how, sentence=sentence) > conf(elsewhere, query=how, sentence=sentence)
        assert conf(agreeing, query=how, sentence=sentence) > conf(agreeing, query=many, sentence=sentence)
        assert 0.0 < conf(elsewhere, query=many, sentence=sentence) < 1.0
    assert len(confidence.CONF_WEIGHTS) == len(confidence.SENTENCE_WEIGHTS) == len(confidence.FEATURES)


def test_vector_rank_reads_the_vector_legs_best_rank_in_the_top_file() -> None:
    vector = [hit("other.go", 1), hit("util.go", 1), hit("router.go", 40), hit("router.go", 80)]
    fused = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.2, vector)], 40)
    assert fused[0].hit.location.path == "router.go"
    i_rank = confidence.FEATURES.index("vector_rank")
    assert confidence.features(fused, "how routing works")[i_rank] == 1 / 3  # rank 2, its best chunk there
    alone = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD)], 40)
    assert confidence.features(alone, "how routing works")[i_rank] == 0.0


def test_keyword_agreement_on_the_top_file_raises_a_sentence_answers_confidence() -> None:
    """keyword_rank reads the keyword leg's best rank in the top hit's file; BM25 agreeing is a sign it is right."""
    vector = (common_pb2.LEG_VECTOR, 1.0, [hit("router.go", 40)])
    agreeing = fuse([vector, (common_pb2.LEG_KEYWORD, 0.2, [hit("tree.go", 1), hit("router.go", 1)])], 40)
    alone = fuse([vector, (common_pb2.LEG_KEYWORD, 0.2, [hit("tree.go", 1), hit("mux.go", 1)])], 40)
    assert agreeing[0].hit.location.path == alone[0].hit.location.path == "router.go"
    i_rank = confidence.FEATURES.index("keyword_rank")
    assert confidence.features(agreeing, "how routing works")[i_rank] == 1 / 2
    assert confidence.features(alone, "how routing works")[i_rank] == 0.0
    conf = partial(confidence.confidence, intent_confidence=0.4, keyword_coverage=0.3, ranked_by_signals=True)
    assert conf(agreeing, query="how routing works") > conf(alone, query="how routing works")
    assert 0.0 < conf(alone, query="how routing works") < conf(agreeing, query="how routing works") < 1.0
    assert confidence.confidence([], 1.0, 1.0, ranked_by_signals=True) == 0.0
