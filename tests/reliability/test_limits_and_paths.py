"""Limits (message size, query length, result count, deadline) and paths (allowed roots, escapes) give
clear statuses, and no snippet ever comes from outside an indexed repository."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import MAX_LIMIT, MAX_MESSAGE_BYTES, MAX_QUERY_CHARS, Settings
from codesearch.server import registrars
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

from tests.fixture_types import CodeOf, StartServer

OUTSIDE_MARKER = "OUTSIDE_SECRET_MARKER"


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    """The server's one allowed root."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    return allowed


@pytest.fixture
def server(tmp_path: Path, start_server: StartServer, repo: SimpleNamespace, allowed: Path) -> ThreadedServer:
    settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_ALLOWED_ROOTS": str(allowed)}
    )
    return start_server(registrars(settings, repo.services))


@pytest.fixture
def stub(server: ThreadedServer) -> search_pb2_grpc.SearchServiceStub:
    return search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))


def test_limits_have_clear_statuses(
    allowed: Path, stub: search_pb2_grpc.SearchServiceStub, repo: SimpleNamespace, code_of: CodeOf
) -> None:
    root = allowed / "r"
    repo.write_version(root, "a", 3)
    repo.index(stub, root, "r")

    def search(**kw: Any) -> Callable[[], object]:
        return lambda: stub.Search(search_pb2.SearchRequest(**{"query": "handler", **kw}), timeout=10)

    assert code_of(search()) == grpc.StatusCode.OK
    assert code_of(search(limit=MAX_LIMIT)) == grpc.StatusCode.OK
    assert code_of(search(limit=10_000)) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(search(limit=-1)) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(search(query="x" * (MAX_QUERY_CHARS + 1))) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(search(query="   ")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(search(query="a\x00b")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(search(repositories=["nope"])) == grpc.StatusCode.NOT_FOUND
    assert code_of(search(repositories=["../etc"])) in (
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert (
        code_of(search(query="(unclosed", mode=search_pb2.SEARCH_MODE_REGEX))
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    # A message over the server's limit is refused by gRPC itself before any handler runs.
    big = search_pb2.SearchRequest(query="x" * (MAX_MESSAGE_BYTES + 1024))
    assert code_of(lambda: stub.Search(big, timeout=30)) == grpc.StatusCode.RESOURCE_EXHAUSTED

    # A deadline too short to meet is DEADLINE_EXCEEDED, never INTERNAL, and the server stays healthy. An
    # uncached search of this small repository can finish inside 1-2 ms on an idle machine, so a short deadline
    # may also be met (OK); the shortest ones never are.
    def search_within(t: float) -> Callable[[], object]:
        return lambda: stub.Search(search_pb2.SearchRequest(query="handler", no_cache=True), timeout=t)

    codes = [code_of(search_within(t)) for t in (0.0002, 0.0005, 0.001, 0.001, 0.002, 0.005)]
    assert set(codes) <= {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.OK}, codes
    assert codes[0] == grpc.StatusCode.DEADLINE_EXCEEDED, codes
    assert code_of(search()) == grpc.StatusCode.OK


def test_index_paths_outside_allowed_roots_are_refused(
    allowed: Path,
    stub: search_pb2_grpc.SearchServiceStub,
    repo: SimpleNamespace,
    code_of: CodeOf,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    repo.write_version(outside, "a", 2)
    index = lambda path, name="x": lambda: repo.index(stub, Path(path), name)  # noqa: E731

    assert code_of(index(outside)) == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(index(f"{allowed}/../outside")) == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(index("/")) == grpc.StatusCode.FAILED_PRECONDITION
    # A symlink inside the allowed root that points out of it is judged by its target.
    (allowed / "escape").symlink_to(outside, target_is_directory=True)
    assert code_of(index(allowed / "escape")) == grpc.StatusCode.FAILED_PRECONDITION
    # A repository whose root is a symlink (from anywhere) into an allowed root is fine: the target is allowed.
    inside = allowed / "inside"
    repo.write_version(inside, "a", 2)
    (tmp_path / "link-in").symlink_to(inside, target_is_directory=True)
    assert code_of(index(tmp_path / "link-in", "linked")) == grpc.StatusCode.OK
    listed = stub.ListRepositories(search_pb2.ListRepositoriesRequest(), timeout=5).repositories
    assert [(r.name, r.root) for r in listed] == [("linked", str(inside))]


def test_nothing_outside_the_repository_is_indexed_or_readable(
    server: ThreadedServer,
    allowed: Path,
    stub: search_pb2_grpc.SearchServiceStub,
    repo: SimpleNamespace,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f'KEY = "{OUTSIDE_MARKER}"\n')
    root = allowed / "r"
    repo.write_version(root, "a", 2)
    (root / "linked_secret.py").symlink_to(outside / "secret.py")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    (root / "null.py").symlink_to("/dev/null")
    os.mkfifo(root / "pipe.py")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock.py"))
    try:
        done = repo.index(stub, root, "r")[-1]
    finally:
        sock.close()
    assert done.phase == search_pb2.INDEX_PHASE_DONE
    assert done.files_total == 2  # only the two real modules

    for mode in (search_pb2.SEARCH_MODE_LITERAL, search_pb2.SEARCH_MODE_KEYWORD, search_pb2.SEARCH_MODE_AUTO):
        resp = stub.Search(
            search_pb2.SearchRequest(query=OUTSIDE_MARKER, mode=mode, no_cache=True), timeout=10
        )
        assert not any(OUTSIDE_MARKER in h.snippet for h in resp.hits)
        assert all(not h.location.path.startswith(("linked", "/", "..")) for h in resp.hits)

    keyword = keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(server.address))
    for path in (
        "../outside/secret.py",
        "/etc/passwd",
        str(outside / "secret.py"),
        "linked_secret.py",
        "mod_0000.py/../../x",
    ):
        with pytest.raises(grpc.RpcError) as err:
            keyword.ReadFile(keyword_pb2.ReadFileRequest(repository="r", path=path), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    ok = keyword.ReadFile(keyword_pb2.ReadFileRequest(repository="r", path="mod_0000.py"), timeout=5)
    assert "MARKER_A" in ok.text
    files = keyword.ListFiles(keyword_pb2.ListFilesRequest(repository="r"), timeout=5).files
    assert sorted(f.path for f in files) == ["mod_0000.py", "mod_0001.py"]
