"""Shared pieces of the reliability tests: a small repository whose content version is visible in search."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

from tests.fixture_types import CodeOf

SERVICES = ("keyword", "graph", "orchestrator")  # the legs that need no model


def write_version(root: Path, version: str, files: int) -> None:
    """A repository at `version` ("a" or "b"): `files` modules, each with the marker MARKER_<version> and a
    function named after it, and no file of any other version. Versions differ in file count, so a mix of
    two snapshots shows up as a wrong count as well as as two markers."""
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("mod_*.py"):
        old.unlink()
    for i in range(files):
        (root / f"mod_{i:04d}.py").write_text(
            f'"""Module {i}."""\n\nLABEL = "MARKER_{version.upper()} {i}"\n\n\n'
            f"def handler_{version}_{i}(request):\n"
            f"    return request.get('value', {i}) + {i}\n\n\n"
            + "".join(f"def helper_{version}_{i}_{j}(x):\n    return x * {j}\n\n\n" for j in range(8))
        )


def index(
    stub: search_pb2_grpc.SearchServiceStub, root: Path, name: str = "repo", timeout: float = 120
) -> list:
    return list(
        stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name=name), timeout=timeout)
    )


def markers(address: str, name: str = "repo") -> tuple[set[str], int]:
    """Which versions' markers a search sees, and how many files carry one (counted through the keyword leg
    at the same address, which answers up to 1000 hits where Search stops at its leg depth)."""
    channel = grpc.insecure_channel(address)
    stub = search_pb2_grpc.SearchServiceStub(channel)
    resp = stub.Search(
        search_pb2.SearchRequest(
            query="MARKER_",
            mode=search_pb2.SEARCH_MODE_LITERAL,
            repositories=[name],
            limit=200,
            no_cache=True,
        ),
        timeout=30,
    )
    seen = {h.snippet.split("MARKER_", 1)[1][:1] for h in resp.hits if "MARKER_" in h.snippet}
    keyword = keyword_pb2_grpc.KeywordServiceStub(channel)
    grep = keyword.Grep(
        keyword_pb2.GrepRequest(repositories=[name], pattern="MARKER_", limit=1000), timeout=30
    )
    channel.close()
    # Two calls may straddle a commit, so each must be whole on its own: Search's hits one version...
    assert len(seen) == 1, f"Search saw versions {seen}"
    # ... and the keyword leg's hits one version, in every file of it (counted by the caller).
    seen_grep = {h.snippet.split("MARKER_", 1)[1][:1] for h in grep.hits if "MARKER_" in h.snippet}
    return seen_grep, len({h.location.path for h in grep.hits})


@pytest.fixture
def repo() -> SimpleNamespace:
    """The helpers above, for test modules (conftest is not importable under --import-mode=importlib)."""
    return SimpleNamespace(write_version=write_version, index=index, markers=markers, services=SERVICES)


@pytest.fixture
def code_of() -> CodeOf:
    """code_of(lambda: stub.X(...)) -> the status code of the call (OK when it returns)."""

    def run(fn: Callable[[], object]) -> grpc.StatusCode:
        try:
            fn()
        except grpc.RpcError as e:
            return e.code()
        return grpc.StatusCode.OK

    return run


@pytest.fixture
def channels() -> Iterator[list[grpc.Channel]]:
    opened: list[grpc.Channel] = []
    yield opened
    for c in opened:
        c.close()
