"""SearchService's repository listing says what the status says."""

from __future__ import annotations

from codesearch.v1 import search_pb2


def test_list_repositories_reports_the_chunks_still_waiting_for_embeddings(held_embeddings) -> None:
    stub = held_embeddings.stub
    (listed,) = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    (status,) = stub.GetStatus(search_pb2.GetStatusRequest()).repositories
    assert listed.chunks > 0
    assert listed.embeddings_pending == status.embeddings_pending == listed.chunks
    assert not listed.embeddings_unknown and not status.embeddings_unknown  # the vector leg answered
    held_embeddings.finish()
    (listed,) = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    assert listed.embeddings_pending == 0
