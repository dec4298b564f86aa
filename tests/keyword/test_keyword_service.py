"""The keyword leg's service over real gRPC: a repository deleted while a request for every repository opens it
is skipped, as one deleted before the listing is; a broken index still says so."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import grpc
import pytest
from codesearch.common.index_update import update_messages
from codesearch.common.snapshot import SnapshotDir
from codesearch.config import Settings
from codesearch.keyword import service
from codesearch.keyword.service import register
from codesearch.keyword.store import KeywordSnapshot
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc

from tests.fixture_types import StartServer
from tests.keyword.test_store_incremental import indexed


@pytest.fixture
def stub(start_server: StartServer, settings: Settings) -> keyword_pb2_grpc.KeywordServiceStub:
    writer = start_server([lambda s: register(s, settings)])
    stub = keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(writer.address))
    for repo in ("kept", "cut"):
        files = [indexed("a.py", f"def {repo}_marker():\n    return 1\n")]
        stub.UpdateKeywordIndex(
            iter(update_messages(keyword_pb2.UpdateKeywordIndexRequest, repo, files, [], True, 1))
        )
    writer.stop()
    reader = start_server([lambda s: register(s, settings)])  # as after a restart: nothing opened yet
    return keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(reader.address))


def listed(stub: keyword_pb2_grpc.KeywordServiceStub) -> set[str]:
    return {s.repository for s in stub.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(), timeout=10).bm25}


def test_a_repository_deleted_while_it_is_opened_is_skipped(
    stub: keyword_pb2_grpc.KeywordServiceStub, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = service.open_snapshot

    def open_while_deleted(generation: Path, version: int) -> KeywordSnapshot:
        if generation.parent.name == "cut":  # a DeleteRepository lands between the listing and the open
            SnapshotDir(generation.parent).delete()
        return real_open(generation, version)

    monkeypatch.setattr(service, "open_snapshot", open_while_deleted)
    assert listed(stub) == {"kept"}  # it was an INTERNAL error: tantivy's files had gone


def test_a_broken_index_is_still_an_error(
    stub: keyword_pb2_grpc.KeywordServiceStub, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(generation: Path, version: int) -> NoReturn:
        raise ValueError("Failed to open file for read")

    monkeypatch.setattr(service, "open_snapshot", broken)
    with pytest.raises(grpc.RpcError) as e:
        listed(stub)
    assert e.value.code() == grpc.StatusCode.INTERNAL  # not skipped: it is still indexed
