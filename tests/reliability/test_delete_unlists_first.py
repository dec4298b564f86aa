"""DeleteRepository takes a repository out of the registry before its legs delete their data, so a search over
every repository in between never asks for a half-deleted one (which answered degraded). Real servers on
127.0.0.1, real indexes on disk; the keyword leg's delete is the real one, wrapped to look at the registry."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.keyword.service import KeywordServicer
from codesearch.orchestrator.registry import Registry
from codesearch.server import registrars
from codesearch.v1 import common_pb2, keyword_pb2, search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer


def test_the_registry_forgets_a_repository_before_its_legs_delete_it(
    tmp_path: Path, start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def unlisted_marker():\n    return 1\n")
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    registry = Registry(settings.service_dir("orchestrator"))
    listed_during_delete: list[set[str]] = []
    real_delete = KeywordServicer.DeleteKeywordRepository

    async def delete_watching_the_registry(
        self: KeywordServicer,
        request: keyword_pb2.DeleteKeywordRepositoryRequest,
        context: grpc.aio.ServicerContext,
    ) -> keyword_pb2.DeleteKeywordRepositoryResponse:
        listed_during_delete.append(set(registry.load()))
        return await real_delete(self, request, context)

    monkeypatch.setattr(KeywordServicer, "DeleteKeywordRepository", delete_watching_the_registry)
    server = start_server(registrars(settings, ("keyword", "graph", "orchestrator")))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    for name in ("kept", "gone"):
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name=name), timeout=120))
    assert set(registry.load()) == {"kept", "gone"}

    assert stub.DeleteRepository(search_pb2.DeleteRepositoryRequest(name="gone"), timeout=30).deleted
    assert listed_during_delete == [{"kept"}]  # already unlisted when the leg started deleting
    resp = stub.Search(search_pb2.SearchRequest(query="unlisted_marker", limit=5), timeout=30)
    assert {h.location.repository for h in resp.hits} == {"kept"}
    assert not [r.leg for r in resp.legs if r.status == common_pb2.LEG_STATUS_DEGRADED]
    with pytest.raises(grpc.RpcError) as again:
        stub.DeleteRepository(search_pb2.DeleteRepositoryRequest(name="gone"), timeout=30)
    assert again.value.code() == grpc.StatusCode.NOT_FOUND
