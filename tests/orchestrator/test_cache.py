"""The query cache never repeats an answer that the index has outgrown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesearch.v1 import common_pb2, search_pb2

if TYPE_CHECKING:  # a conftest is not importable at run time (--import-mode=importlib)
    from tests.orchestrator.conftest import HeldEmbeddings


def vector_status(resp: search_pb2.SearchResponse) -> int:
    return next(r.status for r in resp.legs if r.leg == common_pb2.LEG_VECTOR)


def test_an_answer_given_while_embeddings_were_partial_is_not_served_once_they_are_done(
    held_embeddings: HeldEmbeddings,
) -> None:
    request = search_pb2.SearchRequest(
        query="call again after a failure, waiting longer each time", mode=search_pb2.SEARCH_MODE_SEMANTIC
    )
    early = held_embeddings.stub.Search(request)
    assert vector_status(early) == common_pb2.LEG_STATUS_PARTIAL and not early.hits
    held_embeddings.finish()
    # The index version has not changed (embedding is not a re-index), so only the answer itself can say.
    later = held_embeddings.stub.Search(request)
    assert not later.cache_hit
    assert vector_status(later) == common_pb2.LEG_STATUS_OK
    assert [h.location.path for h in later.hits][:1] == ["retry.py"]
    assert held_embeddings.stub.Search(request).cache_hit  # a complete answer is cached as before


def test_an_answer_from_the_static_tier_is_not_served_once_the_transformer_takes_over(
    held_upgrade: HeldEmbeddings,
) -> None:
    request = search_pb2.SearchRequest(
        query="call again after a failure, waiting longer each time", mode=search_pb2.SEARCH_MODE_SEMANTIC
    )
    early = held_upgrade.stub.Search(request)
    report = next(r for r in early.legs if r.leg == common_pb2.LEG_VECTOR)
    assert report.status == common_pb2.LEG_STATUS_OK and report.upgrading and "tier static" in report.detail
    assert early.hits  # complete for its tier
    assert not held_upgrade.stub.Search(request).cache_hit  # it will change, so it is not repeated
    held_upgrade.finish()
    later = held_upgrade.stub.Search(request)
    assert not later.cache_hit
    report = next(r for r in later.legs if r.leg == common_pb2.LEG_VECTOR)
    assert not report.upgrading and "tier transformer" in report.detail
    assert held_upgrade.stub.Search(request).cache_hit
