"""The types of the shared fixtures in tests/conftest.py, for the tests that take them (a conftest is not
importable under --import-mode=importlib, this module is: tests.fixture_types)."""

from __future__ import annotations

from collections.abc import Callable

import grpc
from codesearch.common.aio_thread import Registrar, ThreadedServer
from codesearch.v1 import keyword_pb2_grpc

StartServer = Callable[[list[Registrar]], ThreadedServer]
"""start_server([registrar, ...]) -> a started server, stopped at the test's teardown."""

Git = Callable[..., str]
"""git(repo, *args) -> stdout."""

CodeOf = Callable[[Callable[[], object]], grpc.StatusCode]
"""code_of(lambda: stub.X(...)) -> the call's status code (tests/reliability/conftest.py)."""

KeywordRepo = Callable[[dict[str, str]], keyword_pb2_grpc.KeywordServiceStub]
"""keyword_repo({path: text}) -> a keyword server's stub with those files indexed as "demo" (tests/keyword)."""
