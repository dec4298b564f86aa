"""SearchService's repository listing says what the status says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesearch.v1 import search_pb2

if TYPE_CHECKING:  # a conftest is not importable at run time (--import-mode=importlib)
    from tests.orchestrator.conftest import HeldEmbeddings


def test_list_repositories_reports_the_chunks_still_waiting_for_embeddings(
    held_embeddings: HeldEmbeddings,
) -> None:
    stub = held_embeddings.stub
    (listed,) = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    (status,) = stub.GetStatus(search_pb2.GetStatusRequest()).repositories
    assert listed.chunks > 0
    assert listed.embeddings_pending == status.embeddings_pending == listed.chunks
    assert not listed.embeddings_unknown and not status.embeddings_unknown  # the vector leg answered
    held_embeddings.finish()
    (listed,) = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    assert listed.embeddings_pending == 0
