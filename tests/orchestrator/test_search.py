"""The search pipeline (orchestrator/search.py): how a routed answer's legs are fused, through the real server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesearch.v1 import common_pb2, search_pb2

if TYPE_CHECKING:  # a conftest is not importable at run time (--import-mode=importlib)
    from tests.orchestrator.conftest import HeldEmbeddings


def test_a_meaning_question_fuses_the_legs_scores_and_a_long_description_their_ranks(
    held_upgrade: HeldEmbeddings,
) -> None:
    def ask(query: str) -> search_pb2.SearchResponse:
        return held_upgrade.stub.Search(search_pb2.SearchRequest(query=query, no_cache=True))

    question = ask("how are failed operations retried")
    assert question.intent == search_pb2.INTENT_UNDERSTAND_CODE
    assert question.strategy == search_pb2.STRATEGY_SCORE_FUSION
    # Both legs answered (the static tier is complete as soon as the index is) and the fused score stays within
    # the legs' weights: each leg's score over its list's best is at most 1, before the ranking signals.
    answered = {r.leg for r in question.legs if r.status == common_pb2.LEG_STATUS_OK and r.hits}
    assert {common_pb2.LEG_KEYWORD, common_pb2.LEG_VECTOR} <= answered
    top = question.hits[0]
    assert top.location.path == "retry.py"
    assert {s.leg for s in top.leg_scores} >= {common_pb2.LEG_KEYWORD, common_pb2.LEG_VECTOR}
    before_signals = top.score
    for boost in reversed(top.boosts):
        before_signals /= boost.factor
    assert 0.0 < before_signals <= 1.0 + 1e-9
    # RRF could give it at most Σ weights / (k + 1), about 0.02 here; its leg shares give it at least the keyword
    # leg's weight share (it is BM25's first hit, the only file).
    keyword_weight = next(r.weight for r in question.legs if r.leg == common_pb2.LEG_KEYWORD)
    vector_weight = next(r.weight for r in question.legs if r.leg == common_pb2.LEG_VECTOR)
    assert before_signals >= keyword_weight / (keyword_weight + vector_weight) - 1e-9

    # More than signals.Params.specific_words content words: one function described, fused by ranks.
    described = ask(
        "run the operation again when it fails sleeping longer between each try until tries run out"
    )
    assert described.intent == search_pb2.INTENT_UNDERSTAND_CODE
    assert described.strategy == search_pb2.STRATEGY_RRF
    # A bare name keeps rank fusion too.
    assert ask("retry").strategy in (search_pb2.STRATEGY_RRF, search_pb2.STRATEGY_DIRECT)
