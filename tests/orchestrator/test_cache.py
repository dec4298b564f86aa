"""The query cache never repeats an answer that the index has outgrown."""

from __future__ import annotations

from codesearch.v1 import common_pb2, search_pb2


def vector_status(resp: search_pb2.SearchResponse) -> int:
    return next(r.status for r in resp.legs if r.leg == common_pb2.LEG_VECTOR)


def test_an_answer_given_while_embeddings_were_partial_is_not_served_once_they_are_done(
    held_embeddings,
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
