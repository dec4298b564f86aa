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


def test_meaning_answers_are_capped_and_names_are_not() -> None:
    """A sentence answer's probability stays under SENTENCE_CAP however clear it looks; a name's does not."""
    clear = fuse(
        [
            (common_pb2.LEG_KEYWORD, 1.0, [hit("router.go", 1)]),
            (common_pb2.LEG_VECTOR, 1.0, [hit("router.go", 1)]),
        ],
        40,
    )
    top = confidence.confidence(clear, 1.0, 1.0, ranked_by_signals=True, query="Router", sentence=True)
    assert 0.5 < top <= confidence.SENTENCE_CAP
    name = confidence.confidence(clear, 1.0, 1.0, ranked_by_signals=True, query="Router", sentence=False)
    assert name > confidence.SENTENCE_CAP


def test_routed_meaning_answers_are_mapped_by_the_calibration_and_keep_their_order() -> None:
    """MEANING_CALIBRATION is monotone (the order of answers, and so AUROC, stays) and raises what the models say
    for a routed meaning question (they under-promise on unseen code); other answers are left as the models say."""
    conf = partial(confidence.confidence, intent_confidence=0.4, keyword_coverage=0.3, ranked_by_signals=True)
    weak = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD)], 40)
    strong = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 1.0, [hit("router.go", 1)])], 40
    )
    how = "how routing works"
    raw = [conf(f, query=how) for f in (weak, strong)]
    mapped = [conf(f, query=how, meaning=True) for f in (weak, strong)]
    assert raw[0] < raw[1] and mapped[0] < mapped[1]
    assert all(m > r for m, r in zip(mapped, raw, strict=True))
    assert mapped == [confidence.calibrated(p) for p in raw]
    ps = [i / 100 for i in range(101)]
    assert [confidence.calibrated(p) for p in ps] == sorted(confidence.calibrated(p) for p in ps)
    assert 0.0 < confidence.calibrated(0.0) < confidence.calibrated(1.0) < 1.0
    assert confidence.confidence([], 1.0, 1.0, ranked_by_signals=True, meaning=True) == 0.0
