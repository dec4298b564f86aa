"""A real server in this process over a data directory, for benchmarks that need no separate processes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2_grpc


@contextmanager
def local_server(home: Path, services: tuple[str, ...]) -> Iterator[search_pb2_grpc.SearchServiceStub]:
    """A SearchService stub to a server hosting `services` on 127.0.0.1; stopped on exit."""
    settings = Settings.from_env({"CODESEARCH_HOME": str(home)})
    server = ThreadedServer(registrars(settings, services)).start()
    try:
        yield search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    finally:
        server.stop()
