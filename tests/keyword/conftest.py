"""A keyword service over a small repository, through a real gRPC server."""

from __future__ import annotations

import grpc
import pytest
from codesearch.common.index_update import update_messages
from codesearch.config import Settings
from codesearch.keyword.service import register
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc

from tests.fixture_types import KeywordRepo, StartServer
from tests.keyword.test_store_incremental import indexed


@pytest.fixture
def keyword_repo(start_server: StartServer, settings: Settings) -> KeywordRepo:
    """keyword_repo({path: text}) -> a stub of a keyword server with those files indexed as repository "demo"."""

    def serve(files: dict[str, str]) -> keyword_pb2_grpc.KeywordServiceStub:
        server = start_server([lambda s: register(s, settings)])
        stub = keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(server.address))
        batch = [indexed(p, t) for p, t in files.items()]
        stub.UpdateKeywordIndex(
            iter(update_messages(keyword_pb2.UpdateKeywordIndexRequest, "demo", batch, [], True, 1))
        )
        return stub

    return serve
