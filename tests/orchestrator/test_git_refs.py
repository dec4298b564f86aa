"""Git sources end to end: a real repository made here (commits, a branch, a tag, a rename, a deletion),
indexed at several refs side by side through the real server, straight from the object store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import Git, StartServer

SERVICES = ("keyword", "graph", "orchestrator")  # no model needed


@pytest.fixture
def history(tmp_path: Path, git: Git) -> dict[str, str]:
    """v1 (tag): alpha.py, beta.py, old.py, stable.py. main: alpha.py edited, beta.py renamed to gamma.py, old.py deleted.
    feature (branch from v1): feature.py added. Working tree (main): an untracked file and an ignored one."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "alpha.py").write_text("def alpha():\n    return 'first alpha marker'\n")
    (repo / "beta.py").write_text("def beta():\n    return 'beta renamed marker'\n")
    (repo / "old.py").write_text("def old():\n    return 'deleted later marker'\n")
    (repo / "stable.py").write_text("def stable():\n    return 'never changes'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "-a", "v1", "-m", "release one")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feature.py").write_text("def feature():\n    return 'feature branch marker'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "alpha.py").write_text("def alpha():\n    return 'second alpha marker'\n")
    git(repo, "mv", "beta.py", "gamma.py")
    git(repo, "rm", "-q", "old.py")
    git(repo, "commit", "-q", "-am", "two")
    (repo / "untracked.py").write_text("UNTRACKED_MARKER = 1\n")
    (repo / "debug.log").write_text("IGNORED_MARKER\n")
    return {
        "root": str(repo),
        "v1": git(repo, "rev-parse", "v1^{commit}"),
        "feature": git(repo, "rev-parse", "feature"),
        "main": git(repo, "rev-parse", "main"),
    }


@pytest.fixture
def stub(tmp_path: Path, start_server: StartServer) -> search_pb2_grpc.SearchServiceStub:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, SERVICES))
    return search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))


def index(
    stub: search_pb2_grpc.SearchServiceStub, root: str, ref: str, **kw: Any
) -> search_pb2.IndexRepositoryResponse:
    progress = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=root, ref=ref, **kw)))
    assert progress[-1].phase == search_pb2.INDEX_PHASE_DONE
    return progress[-1]


def search(stub: search_pb2_grpc.SearchServiceStub, text: str, **kw: Any) -> search_pb2.SearchResponse:
    return stub.Search(
        search_pb2.SearchRequest(query=text, mode=search_pb2.SEARCH_MODE_LITERAL, no_cache=True, **kw)
    )


def literal(stub: search_pb2_grpc.SearchServiceStub, text: str, **kw: Any) -> list[tuple[str, str, str]]:
    """(repository, path, commit) of every hit, and of every other repository a hit says holds it too."""
    hits = search(stub, text, **kw).hits
    listed = {
        r.name: r.commit for r in stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    }
    own = [(h.location.repository, h.location.path, h.commit) for h in hits]
    folded = [(r, h.location.path, listed.get(r, "")) for h in hits for r in h.also_in]
    return sorted(own + folded)


def test_every_ref_answers_with_its_own_content_and_commit(
    stub: search_pb2_grpc.SearchServiceStub, history: dict[str, str]
) -> None:
    root = history["root"]
    for ref in ("main", "v1", "feature"):
        done = index(stub, root, ref)
        assert (done.repository, done.commit, done.ref) == (f"proj@{ref}", history[ref], ref)
        assert done.files_read == done.files_total  # first run: everything read

    listed = {
        r.name: (r.commit, r.ref)
        for r in stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    }
    assert listed == {f"proj@{ref}": (history[ref], ref) for ref in ("main", "v1", "feature")}

    main, v1, feature = (f"proj@{r}" for r in ("main", "v1", "feature"))
    # The edit: each ref holds its own version of alpha.py, and every hit says which commit it came from.
    assert literal(stub, "second alpha marker") == [(main, "alpha.py", history["main"])]
    assert literal(stub, "first alpha marker") == [
        (feature, "alpha.py", history["feature"]),
        (v1, "alpha.py", history["v1"]),
    ]
    # The rename and the deletion: main has gamma.py and no old.py; the tag still has beta.py and old.py.
    assert literal(stub, "beta renamed marker") == [
        (feature, "beta.py", history["feature"]),
        (main, "gamma.py", history["main"]),
        (v1, "beta.py", history["v1"]),
    ]
    assert [r for r, _, _ in literal(stub, "deleted later marker")] == [feature, v1]
    # Searched together, an identical file is one hit naming the other refs; a changed one is a hit per ref.
    (stable,) = search(stub, "never changes", repositories=["proj"]).hits
    assert {stable.location.repository, *stable.also_in} == {main, v1, feature}
    assert len(stable.also_in) == 2 and stable.commit == history[stable.location.repository.split("@")[1]]
    alpha = search(stub, "alpha marker", repositories=["proj"]).hits
    assert sorted((h.location.repository, sorted(h.also_in)) for h in alpha) in (
        [(feature, [v1]), (main, [])],
        [(main, []), (v1, [feature])],
    )
    assert [r for r, _, _ in literal(stub, "feature branch marker")] == [feature]
    # Untracked and .gitignore'd files of the working tree never enter a ref's index.
    assert literal(stub, "UNTRACKED_MARKER") == []
    assert literal(stub, "IGNORED_MARKER") == []

    # One ref at a time, all refs of the repository together, or filtered by ref (name or commit prefix).
    assert [r for r, _, _ in literal(stub, "alpha marker", repositories=[v1])] == [v1]
    assert len(literal(stub, "alpha marker", repositories=["proj"])) == 3
    assert [r for r, _, _ in literal(stub, "alpha marker", refs=["main"])] == [main]
    assert [r for r, _, _ in literal(stub, "alpha marker", refs=[history["v1"][:10]])] == [v1]


def test_reindex_after_one_commit_reads_only_the_changed_files(
    stub: search_pb2_grpc.SearchServiceStub, history: dict[str, str], git: Git
) -> None:
    root = Path(history["root"])
    first = index(stub, str(root), "main")
    assert (first.files_total, first.files_read, first.delta_from_commit) == (
        3,
        3,
        "",
    )  # alpha, gamma, stable

    (root / "alpha.py").write_text("def alpha():\n    return 'third alpha marker'\n")
    (root / "delta.py").write_text("def delta():\n    return 'new in three'\n")
    git(root, "add", "alpha.py", "delta.py")
    git(root, "rm", "-q", "gamma.py")
    git(root, "commit", "-q", "-m", "three")
    head = git(root, "rev-parse", "main")

    again = index(stub, str(root), "main")
    # alpha.py edited, delta.py added: read. gamma.py deleted: dropped without a read. stable.py: not read.
    assert (again.commit, again.delta_from_commit) == (head, history["main"])
    assert (again.files_total, again.files_read, again.files_changed, again.files_unchanged) == (3, 2, 2, 1)
    assert again.files_deleted == 1
    assert literal(stub, "third alpha marker") == [("proj@main", "alpha.py", head)]
    assert literal(stub, "beta renamed marker") == []

    # Nothing new: nothing is read at all; a forced run reads everything again.
    assert index(stub, str(root), "main").files_read == 0
    assert index(stub, str(root), "main", force_full=True).files_read == 3


def test_bad_refs_and_paths_are_refused_plainly(
    stub: search_pb2_grpc.SearchServiceStub, history: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(grpc.RpcError) as e:
        index(stub, history["root"], "no-such-branch")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = e.value.details()
    assert details is not None
    assert "not a branch, tag or commit" in details

    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(grpc.RpcError) as e:
        index(stub, str(plain), "main")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = e.value.details()
    assert details is not None
    assert "not a git repository" in details

    with pytest.raises(grpc.RpcError) as e:
        index(stub, history["root"], "main", watch=True)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    with pytest.raises(grpc.RpcError) as e:
        list(
            stub.IndexRepository(
                search_pb2.IndexRepositoryRequest(path=history["root"], changed_paths=["../etc/passwd"])
            )
        )
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
