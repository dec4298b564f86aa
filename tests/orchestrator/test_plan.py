"""The plan as data: which legs a search asks, with what request, weight and budget (no call is made)."""

from __future__ import annotations

from typing import Any

import pytest
from codesearch.common.errors import ServiceError
from codesearch.orchestrator.plan import (
    LONG_DESCRIPTION_VECTOR_FACTOR,
    STEM_BELOW_COVERAGE,
    LegPlan,
    Plan,
    Scope,
    plan_search,
)
from codesearch.orchestrator.query import SPECIFIC_WORDS, Query
from codesearch.orchestrator.query_terms import content_words
from codesearch.orchestrator.router import classify
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, search_pb2, vector_pb2

ALL = {"keyword", "vector", "graph"}


def plan_for(query: str, available: set[str] = ALL, **kw: Any) -> Plan:
    request = search_pb2.SearchRequest(query=query, **kw)
    parsed = Query.parse(query)
    return plan_search(
        request, parsed, classify(parsed), Scope.of(request, ["repo"]), available, budget_s=1.5
    )


def vector_request(leg: LegPlan) -> vector_pb2.VectorSearchRequest:
    """The request a vector leg is sent (the plan types every leg's as a Message)."""
    assert isinstance(leg.request, vector_pb2.VectorSearchRequest), leg
    return leg.request


def test_where_is_x_defined_goes_direct_to_the_definition_leg_with_the_budget() -> None:
    # A bare name is not direct (router.DIRECT_CONFIDENCE): its answers include the name's users too.
    assert plan_for("parse_config").strategy == search_pb2.STRATEGY_RRF
    plan = plan_for("where is parse_config defined")
    assert plan.strategy == search_pb2.STRATEGY_DIRECT
    [leg] = plan.legs
    assert (leg.leg, leg.budget_s) == (common_pb2.LEG_DEFINITION, 1.5)
    assert leg.request == graph_pb2.FindDefinitionsRequest(
        repositories=["repo"], name="parse_config", limit=50
    )


def test_a_direct_plan_says_up_front_what_it_asks_when_nothing_is_found() -> None:
    plan = plan_for("where is parse_config defined")
    assert plan.strategy == search_pb2.STRATEGY_DIRECT and plan.fallback is not None
    fallback = plan.fallback
    assert fallback.strategy == search_pb2.STRATEGY_RRF_AFTER_DIRECT and fallback.fallback is None
    assert not fallback.settles
    assert [(p.leg, p.weight) for p in fallback.legs] == [
        (common_pb2.LEG_DEFINITION, 0.7),
        (common_pb2.LEG_REFERENCES, 0.2),
        (common_pb2.LEG_KEYWORD, 0.1),
        (common_pb2.LEG_VECTOR, 0.0),
    ]
    assert fallback.legs[-1].request is None and fallback.legs[-1].skip_reason == "weight 0 for this intent"
    assert plan_for("parse_config").fallback is None  # not direct: every routed leg is asked at once


def test_a_meaning_query_asks_keyword_and_vector_with_the_whole_query_and_filters() -> None:
    plan = plan_for("how are retries with backoff done", languages=["python"], path_glob="src/*")
    # A meaning question fuses the legs' scores, and its keyword answer may settle it: both decided here.
    assert plan.strategy == search_pb2.STRATEGY_SCORE_FUSION and plan.settles
    requests = {p.leg: p.request for p in plan.legs}
    assert requests[common_pb2.LEG_KEYWORD] == keyword_pb2.KeywordSearchRequest(
        repositories=["repo"],
        query="how are retries with backoff done",
        limit=50,
        languages=["python"],
        path_glob="src/*",
        stem_below_coverage=STEM_BELOW_COVERAGE,  # word stems when its words do not meet in one chunk
    )
    assert requests[common_pb2.LEG_VECTOR] == vector_pb2.VectorSearchRequest(
        repositories=["repo"],
        text="how are retries with backoff done",
        limit=50,
        languages=["python"],
        path_glob="src/*",  # issue 20: the vector leg honours the glob too
        # no plain_static_query: the static tier's query is boosted in every mode (vector/query_boost.py)
    )


def test_forced_modes_naive_baseline_and_missing_services() -> None:
    literal = plan_for("connection refused", mode=search_pb2.SEARCH_MODE_LITERAL, case_sensitive=True)
    assert literal.strategy == search_pb2.STRATEGY_FORCED
    assert literal.route.intent == search_pb2.INTENT_EXACT_MATCH
    [grep] = literal.legs
    assert isinstance(grep.request, keyword_pb2.GrepRequest) and grep.request.case_sensitive

    naive = plan_for("anything", mode=search_pb2.SEARCH_MODE_NAIVE_HYBRID, available={"keyword"})
    assert naive.strategy == search_pb2.STRATEGY_NAIVE_RRF
    assert [(p.leg, p.weight, p.request is None) for p in naive.legs] == [
        (common_pb2.LEG_KEYWORD, 1.0, False),
        (common_pb2.LEG_VECTOR, 1.0, True),
    ]
    assert naive.legs[1].skip_reason == "vector service is not configured"

    with pytest.raises(ServiceError):
        plan_for("anything", mode=99)


def test_every_mode_boosts_and_only_semantic_mode_asks_for_its_model_and_late_interaction() -> None:
    [semantic] = plan_for("how are retries done", mode=search_pb2.SEARCH_MODE_SEMANTIC).legs
    assert isinstance(semantic.request, vector_pb2.VectorSearchRequest)
    assert not semantic.request.plain_static_query
    assert semantic.request.semantic_static_model and semantic.request.late_interaction
    for mode in (search_pb2.SEARCH_MODE_NAIVE_HYBRID, search_pb2.SEARCH_MODE_AUTO):
        legs = plan_for("how are retries done", mode=mode).legs
        vector = [vector_request(p) for p in legs if p.leg == common_pb2.LEG_VECTOR]
        flags = [(r.plain_static_query, r.semantic_static_model, r.late_interaction) for r in vector]
        assert flags == [(False, False, False)]


def test_a_long_description_of_one_function_lets_the_vector_leg_lead_with_late_interaction() -> None:
    long_question = (
        "how does dict-style log setup wrap nested dicts and lists so prefixed strings get resolved lazily"
    )
    short_question = "how are retries with backoff done"

    def vector_and_keyword(query: str) -> tuple[LegPlan, LegPlan]:
        legs = {p.leg: p for p in plan_for(query).legs}
        return legs[common_pb2.LEG_VECTOR], legs[common_pb2.LEG_KEYWORD]

    vector, keyword = vector_and_keyword(long_question)
    short_vector, short_keyword = vector_and_keyword(short_question)
    assert vector_request(vector).late_interaction and not vector_request(short_vector).late_interaction
    assert vector.weight / keyword.weight == pytest.approx(
        LONG_DESCRIPTION_VECTOR_FACTOR * short_vector.weight / short_keyword.weight
    )
    assert vector.weight > keyword.weight and short_vector.weight < short_keyword.weight
    # "Long" starts past query.SPECIFIC_WORDS content words.
    nine = "how does the parser split quoted shell words into tokens respecting escapes"
    eight = "how does the parser split quoted shell words into tokens respecting"
    assert [len(content_words(q)) for q in (nine, eight)] == [
        SPECIFIC_WORDS + 1,
        SPECIFIC_WORDS,
    ]
    assert vector_request(vector_and_keyword(nine)[0]).late_interaction
    assert not vector_request(vector_and_keyword(eight)[0]).late_interaction
    # The same words quoted are a literal to find, not a description to understand.
    quoted = plan_for(f'"{long_question}"').legs
    assert not any(
        p.leg == common_pb2.LEG_VECTOR and p.request and vector_request(p).late_interaction for p in quoted
    )


def keyword_stems(query: str, **kw: Any) -> float:
    requests = {p.leg: p.request for p in plan_for(query, **kw).legs if p.request is not None}
    request = requests[common_pb2.LEG_KEYWORD]
    assert isinstance(request, keyword_pb2.KeywordSearchRequest)
    return request.stem_below_coverage


def test_only_short_meaning_questions_may_turn_to_word_stems() -> None:
    assert 0 < STEM_BELOW_COVERAGE <= 1
    assert keyword_stems("cookie setting and signing on the response") == pytest.approx(STEM_BELOW_COVERAGE)
    assert keyword_stems("how are retries with backoff done") == pytest.approx(STEM_BELOW_COVERAGE)
    # A literal is matched as written; so are names and long descriptions of one function (the vector leg leads).
    assert keyword_stems('find "connection refused"', preset=search_pb2.PRESET_THOROUGH) == 0.0
    assert keyword_stems("parse_config") == 0.0
    long = "how does dict-style log setup wrap nested dicts and lists so prefixed strings get resolved lazily"
    assert keyword_stems(long) == 0.0
    # Forced modes and the equal-weight baseline ask the words as written.
    assert keyword_stems("how are retries with backoff done", mode=search_pb2.SEARCH_MODE_KEYWORD) == 0.0
    assert keyword_stems("how are retries with backoff done", mode=search_pb2.SEARCH_MODE_NAIVE_HYBRID) == 0.0
