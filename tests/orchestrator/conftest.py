"""A real server whose vector leg embeds only when the test says so: the state while embeddings fill in."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from codesearch.vector.service import VectorServicer, add_servicer

from tests.fixture_types import StartServer

RETRY_PY = '''"""Retries."""


def retry(operation, tries=4):
    """Run the operation again when it fails, sleeping longer between each try."""
    delay = 0.1
    for _ in range(tries):
        try:
            return operation()
        except OSError:
            delay *= 2
    raise TimeoutError("out of tries")
'''


@dataclass
class HeldEmbeddings:
    stub: search_pb2_grpc.SearchServiceStub
    vector: VectorServicer  # its worker has not started: every chunk stays pending until `finish`
    repo: Path

    def finish(self) -> None:
        """Lets the vector leg embed every pending chunk and waits until it has."""
        self.vector.start()
        assert asyncio.run(self.vector.wait_idle("demo", timeout=600))  # 2 shared cores can be slow


@pytest.fixture
def held_embeddings(tmp_path: Path, start_server: StartServer) -> Iterator[HeldEmbeddings]:
    # The transformer tier alone: the static tier embeds inside the index update, so with it nothing is pending.
    yield from _held(tmp_path, start_server, "transformer")


@pytest.fixture
def held_upgrade(tmp_path: Path, start_server: StartServer) -> Iterator[HeldEmbeddings]:
    # Both tiers: the static one answers at once, the transformer waits for `finish` to take over.
    yield from _held(tmp_path, start_server, "static,transformer")


def _held(tmp_path: Path, start_server: StartServer, tiers: str) -> Iterator[HeldEmbeddings]:
    vector_settings = {
        "CODESEARCH_HOME": str(tmp_path / "vector-home"),
        "CODESEARCH_VECTOR_TIERS": tiers,
    }
    vector = VectorServicer(Settings.from_env(vector_settings), start_worker=False)
    vector_server = start_server([lambda s: add_servicer(s, vector)])
    settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_VECTOR_ADDR": vector_server.address}
    )
    server = start_server(registrars(settings, ("keyword", "graph", "orchestrator")))
    channel = grpc.insecure_channel(server.address)
    repo = tmp_path / "demo"
    repo.mkdir()
    (repo / "retry.py").write_text(RETRY_PY)
    stub = search_pb2_grpc.SearchServiceStub(channel)
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="demo")))
    yield HeldEmbeddings(stub, vector, repo)
    channel.close()
    vector.close()
