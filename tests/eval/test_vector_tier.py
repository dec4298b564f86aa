"""Run files record which vector tier answered, and reports count them (issue #16: which tier answered)."""

from __future__ import annotations

from codesearch.eval.harness import vector_tier
from codesearch.eval.polyglot import PolyQuery
from codesearch.eval.polyglot_run import run_line
from codesearch.eval.runfile import RunRecord, format_tiers, tier_counts
from codesearch.orchestrator.fanout import _vector_hits
from codesearch.v1 import common_pb2, search_pb2, vector_pb2


def _response(vector_detail: str | None) -> search_pb2.SearchResponse:
    resp = search_pb2.SearchResponse()
    resp.legs.add(leg=common_pb2.LEG_KEYWORD, status=common_pb2.LEG_STATUS_OK)
    if vector_detail is not None:
        resp.legs.add(leg=common_pb2.LEG_VECTOR, status=common_pb2.LEG_STATUS_OK, detail=vector_detail)
    return resp


def test_the_vector_legs_report_names_the_tier() -> None:
    assert vector_tier(_response("tier static, model all-MiniLM-L6-v2")) == "static"
    assert vector_tier(_response("tier transformer, model m (a better tier is filling in)")) == "transformer"
    assert vector_tier(_response(None)) == ""  # keyword-only answer
    assert vector_tier(_response("")) == ""  # a vector leg that answered nothing names no tier


def test_a_boosted_static_query_is_named_in_the_report_and_counted() -> None:
    """The vector leg's answer as the fan-out writes it into the leg report (vector/query_boost.py)."""
    details: list[str] = []
    for boosted in (True, False):
        answer = vector_pb2.VectorSearchResponse(
            tier="static", model="s#model2vec", query_encoder="t mapped" if boosted else "s#model2vec"
        )
        answer.query_boosted = boosted
        details.append(_vector_hits(answer, common_pb2.LEG_VECTOR).detail)
    assert details == [
        "tier static, model s#model2vec, query boosted by t mapped",
        "tier static, model s#model2vec",
    ]
    assert [vector_tier(_response(d)) for d in details] == ["static boosted", "static"]


def test_run_lines_and_reports_carry_the_tier() -> None:
    q = PolyQuery("r", "r:0", "q", "semantic", ())
    line = run_line(q, _response("tier static, model x"), 1.0, "")
    assert line["vector_tier"] == "static"
    assert "vector_tier" not in run_line(q, _response(None), 1.0, "")
    rec = RunRecord(id="a", results=[], vector_tier="transformer").to_json()
    assert rec["vector_tier"] == "transformer"
    runs = {"auto": {"a": rec, "b": {"id": "b"}}, "keyword": {"a": {"id": "a"}}}
    assert tier_counts(runs["auto"]) == {"none": 1, "transformer": 1}
    text = format_tiers(runs)
    assert "auto: none 1, transformer 1" in text and "keyword" not in text
    assert format_tiers({"keyword": {"a": {"id": "a"}}}) == ""
