"""Server-side watching of a directory repository: an edit, a new file, a deletion and a burst of 2,000 touched
files each end in exactly the right index state, and the burst is one index run."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")  # no model needed
SETTLE_TIMEOUT_S = 60.0  # generous for 2 shared cores; the freshness figure is a benchmark, not this
BURST_FILES = 2_000


@pytest.fixture
def stub(tmp_path: Path, start_server: StartServer) -> search_pb2_grpc.SearchServiceStub:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, SERVICES))
    return search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))


def wait_for(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"the index never reached: {what}")
        time.sleep(0.05)


def repo(stub: search_pb2_grpc.SearchServiceStub) -> search_pb2.Repository:
    (record,) = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    return record


def found(stub: search_pb2_grpc.SearchServiceStub, text: str) -> list[str]:
    resp = stub.Search(
        search_pb2.SearchRequest(
            query=text, mode=search_pb2.SEARCH_MODE_LITERAL, no_cache=True, limit=200, case_sensitive=True
        )
    )
    return sorted(h.location.path for h in resp.hits)


def test_edit_new_file_deletion_and_burst(stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 'original text'\n")
    (root / "b.py").write_text("def b():\n    return 'doomed text'\n")
    (root / ".gitignore").write_text("scratch/\n")
    done = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), watch=True)))[-1]
    assert done.phase == search_pb2.INDEX_PHASE_DONE
    # The watcher's own first run (a full one: what changed before it watched is unknown) bumps the version.
    wait_for("the watcher's first run", lambda: repo(stub).index_version == 2)
    assert repo(stub).watched

    (root / "a.py").write_text("def a():\n    return 'edited text'\n")
    wait_for("the edit", lambda: found(stub, "edited text") == ["a.py"])
    assert found(stub, "original text") == []

    (root / "c.py").write_text("def c():\n    return 'brand new text'\n")
    wait_for("the new file", lambda: found(stub, "brand new text") == ["c.py"])

    (root / "b.py").unlink()
    # Searchable as soon as the keyword leg commits; the record is written when every leg has.
    wait_for("the deletion", lambda: found(stub, "doomed text") == [] and repo(stub).files == 2)

    before = repo(stub).index_version
    (root / "scratch").mkdir()
    (root / "scratch" / "ignored.py").write_text("IGNORED = 'scratch text'\n")
    burst = root / "burst"
    burst.mkdir()
    for i in range(BURST_FILES):
        (burst / f"f{i:04d}.py").write_text(f"VALUE_{i:04d} = 'burst text'\n")
    wait_for("the burst", lambda: repo(stub).files == 2 + BURST_FILES)
    time.sleep(1.0)  # anything still queued would start a run now
    after = repo(stub)
    assert after.files == 2 + BURST_FILES
    assert after.index_version == before + 1, "the burst was not coalesced into one run"
    assert found(stub, "VALUE_1999 =") == ["burst/f1999.py"]
    assert found(stub, "scratch text") == []  # .gitignore'd: never indexed, watched or not

    # Deleting the repository stops the watcher: later changes index nothing.
    stub.DeleteRepository(search_pb2.DeleteRepositoryRequest(name="tree"))
    (root / "late.py").write_text("LATE = 1\n")
    time.sleep(0.5)
    assert stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories == []


def test_watching_resumes_after_a_restart(tmp_path: Path, start_server: StartServer) -> None:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("A = 'first'\n")
    first = start_server(registrars(settings, SERVICES))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(first.address))
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), watch=True)))
    wait_for("the watcher's first run", lambda: repo(stub).index_version == 2)
    first.stop()

    (root / "a.py").write_text("A = 'changed while the server was down'\n")
    second = start_server(registrars(settings, SERVICES))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(second.address))
    # The resumed watcher starts with a full run, which finds what changed while nobody watched.
    wait_for(
        "the change made while down", lambda: found(stub, "changed while the server was down") == ["a.py"]
    )
    (root / "a.py").write_text("A = 'changed after the restart'\n")
    wait_for("the change after the restart", lambda: found(stub, "changed after the restart") == ["a.py"])
    assert repo(stub).watched
