"""A request for every repository answers for those still there when one is deleted under it (the CI failure of
stop 26: the orphan sweep at start deleted a repository between a stats call's listing and its opening, and the
whole call failed NOT_FOUND). Real servers on 127.0.0.1, real indexes on disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import (
    graph_pb2,
    graph_pb2_grpc,
    keyword_pb2,
    keyword_pb2_grpc,
    search_pb2,
    search_pb2_grpc,
)

from tests.fixture_types import StartServer


def test_a_repository_deleted_after_the_listing_is_skipped_and_a_named_one_is_not_found(
    tmp_path: Path, start_server: StartServer
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def listing_marker():\n    return 1\n")
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    first = start_server(registrars(settings, ("keyword", "graph", "orchestrator")))
    search = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(first.address))
    for name in ("kept", "gone"):
        list(
            search.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name=name), timeout=120)
        )
    first.stop()
    # What a delete leaves halfway through removing the folder: still listed (CURRENT is there), its generation gone.
    for leg in ("keyword", "graph"):
        for generation in (settings.service_dir(leg) / "gone").glob("gen-*"):
            shutil.rmtree(generation)

    second = start_server(registrars(settings, ("keyword", "graph")))
    channel = grpc.insecure_channel(second.address)
    keyword, graph = keyword_pb2_grpc.KeywordServiceStub(channel), graph_pb2_grpc.GraphServiceStub(channel)

    stats = keyword.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(), timeout=10)
    assert [s.repository for s in stats.bm25] == ["kept"] and [s.repository for s in stats.trigram] == [
        "kept"
    ]
    assert stats.bm25[0].disk_bytes > 0
    hits = keyword.KeywordSearch(
        keyword_pb2.KeywordSearchRequest(query="listing_marker", limit=5), timeout=10
    ).hits
    assert {h.location.repository for h in hits} == {"kept"}
    graph_stats = graph.GetGraphStats(graph_pb2.GetGraphStatsRequest(), timeout=10).repositories
    assert [s.repository for s in graph_stats] == ["kept"] and graph_stats[0].disk_bytes > 0

    with pytest.raises(grpc.RpcError) as named:
        keyword.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(repositories=["gone"]), timeout=10)
    assert named.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as named_graph:
        graph.GetGraphStats(graph_pb2.GetGraphStatsRequest(repositories=["gone"]), timeout=10)
    assert named_graph.value.code() == grpc.StatusCode.NOT_FOUND
