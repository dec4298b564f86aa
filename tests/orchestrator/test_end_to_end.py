"""End to end through the real server: index a small repository, search it, edit, delete, re-index, errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from codesearch.config import Settings
from codesearch.orchestrator import chunker
from codesearch.server import registrars
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

SERVICES = (
    "keyword",
    "graph",
    "orchestrator",
)  # the legs that need no model; vector and rerank have their own tests

CONFIG_PY = '''"""Configuration loading."""

import json


class ConfigError(Exception):
    pass


def parse_config(path):
    """Read a JSON configuration file and return a dict."""
    with open(path) as fh:
        data = json.load(fh)
    if "name" not in data:
        raise ConfigError("connection refused by config: missing name")
    return data
'''

SERVER_PY = """from config import parse_config


def start_server(path):
    cfg = parse_config(path)
    return cfg["name"]


def retryWithBackoff(fn, attempts=5):
    delay = 0.1
    for _ in range(attempts):
        try:
            return fn()
        except OSError:
            delay *= 2
    raise TimeoutError("gave up after retries")
"""


def write_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "config.py").write_text(CONFIG_PY)
    (root / "server.py").write_text(SERVER_PY)
    (root / "notes.md").write_text("# Notes\n\nThe server retries with exponential backoff.\n")
    (root / "blob.bin").write_bytes(b"\x00\x01binary")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "secret.py").write_text("SECRET_TOKEN = 1\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("function dep() {}\n")
    return root


@pytest.fixture
def stub(tmp_path: Path, start_server: StartServer) -> search_pb2_grpc.SearchServiceStub:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, SERVICES))
    return search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))


def index(
    stub: search_pb2_grpc.SearchServiceStub, path: Path, name: str = "demo"
) -> search_pb2.IndexRepositoryResponse:
    progress = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(path), name=name)))
    assert progress[0].phase == search_pb2.INDEX_PHASE_SCANNING
    assert progress[-1].phase == search_pb2.INDEX_PHASE_DONE
    return progress[-1]


def search(
    stub: search_pb2_grpc.SearchServiceStub, query: str, mode: str = "keyword", **kw: Any
) -> search_pb2.SearchResponse:
    return stub.Search(
        search_pb2.SearchRequest(
            query=query,
            mode=f"SEARCH_MODE_{mode.upper()}",  # the enum's label (the stubs type .Value() as plain int)
            **kw,
        )
    )


def paths(resp: search_pb2.SearchResponse) -> list[str]:
    return [h.location.path for h in resp.hits]


def test_index_search_edit_delete(stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "demo")
    done = index(stub, repo)
    # config.py, server.py, notes.md and blob.bin are found; ignored/ and node_modules/ are never walked.
    assert done.files_total == 4
    assert (done.files_changed, done.files_skipped, done.index_version) == (3, 1, 1)
    assert any("blob.bin" in w and "binary" in w for w in done.warnings)

    resp = search(stub, "parse config")
    assert paths(resp)[0] == "config.py"
    top = resp.hits[0]
    assert top.location.start_line >= 1 and top.location.end_line >= top.location.start_line
    assert top.found_by and top.leg_scores[0].rank == 0

    lit = search(stub, "connection refused", "literal")
    assert [(h.location.path, h.location.start_line) for h in lit.hits] == [("config.py", 15)]
    assert search(stub, "CONNECTION REFUSED", "literal").hits  # case-insensitive by default
    assert not search(stub, "CONNECTION REFUSED", "literal", case_sensitive=True).hits

    rx = search(stub, r"def \w+_(config|server)", "regex")
    assert sorted((h.location.path, h.location.start_line) for h in rx.hits) == [
        ("config.py", 10),
        ("server.py", 4),
    ]

    # Re-index after an edit and a delete: only the changed file is re-read; the deleted one disappears.
    (repo / "server.py").write_text(SERVER_PY.replace("gave up after retries", "exhausted every retry"))
    (repo / "notes.md").unlink()
    again = index(stub, repo)
    assert (again.files_changed, again.files_unchanged, again.files_deleted) == (1, 1, 1)
    assert again.index_version == 2
    assert search(stub, "exhausted every retry", "literal").hits
    assert not search(stub, "gave up after retries", "literal").hits
    assert "notes.md" not in paths(search(stub, "exponential backoff notes"))

    # The query cache answers a repeated search, and a re-index (new version) invalidates it.
    assert search(stub, "exhausted every retry", "literal").cache_hit

    # Unchanged re-index changes nothing but still answers.
    same = index(stub, repo)
    assert (same.files_changed, same.files_deleted) == (0, 0)
    assert paths(search(stub, "parse config"))[0] == "config.py"

    # A new way of cutting files (another chunker setting) re-chunks every file on the next run.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunker, "MAX_DEFINITION_LINES", chunker.MAX_DEFINITION_LINES + 1)
        rechunked = index(stub, repo)
    assert (rechunked.files_changed, rechunked.files_unchanged) == (2, 0)

    repos = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    assert [(r.name, r.files) for r in repos] == [("demo", 2)]
    status = stub.GetStatus(search_pb2.GetStatusRequest())
    assert {s.name for s in status.services if s.available} >= {"keyword", "graph"}

    assert stub.DeleteRepository(search_pb2.DeleteRepositoryRequest(name="demo")).deleted
    with pytest.raises(grpc.RpcError) as err:
        search(stub, "parse config", repositories=["demo"])
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_bad_input_gets_clear_statuses(stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "demo")
    index(stub, repo)

    def code_of(fn: Callable[[], object]) -> grpc.StatusCode:
        with pytest.raises(grpc.RpcError) as err:
            fn()
        return err.value.code()

    assert code_of(lambda: search(stub, "   ")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: search(stub, "x" * 5000)) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: search(stub, "nul\x00byte")) == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        search(stub, "def (unclosed", "regex")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = err.value.details()
    assert details is not None
    assert "regex" in details
    assert code_of(lambda: search(stub, "x", repositories=["nope"])) == grpc.StatusCode.NOT_FOUND
    assert code_of(lambda: search(stub, "x", limit=-1)) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: index(stub, tmp_path / "missing")) == grpc.StatusCode.INVALID_ARGUMENT
    (tmp_path / "plain.txt").write_text("x")
    assert code_of(lambda: index(stub, tmp_path / "plain.txt")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: index(stub, repo, name="../evil")) == grpc.StatusCode.INVALID_ARGUMENT
    # The server is still up and the index intact.
    assert paths(search(stub, "parse config"))[0] == "config.py"


def test_odd_files_do_not_break_indexing(stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "demo")
    (repo / "latin1.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))  # not UTF-8
    os.symlink(repo / "loop", repo / "loop")  # a symlink loop
    os.symlink("/etc/hostname", repo / "escape.txt")  # a symlink out of the repository
    os.mkfifo(repo / "pipe")
    done = index(stub, repo)
    assert done.files_changed == 4  # config.py, server.py, notes.md, latin1.py
    skipped = " ".join(done.warnings)
    assert "escape.txt" in skipped and "pipe" in skipped and "loop" in skipped
    assert search(stub, "caf", "literal").hits
    assert not search(stub, "localhost", "literal").hits  # nothing from outside the repository


def test_a_name_defined_nowhere_falls_back_from_direct_to_every_leg(
    stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path
) -> None:
    index(stub, write_repo(tmp_path / "repo"))
    defined = search(stub, "where is retryWithBackoff defined", mode="auto")
    assert defined.strategy == search_pb2.STRATEGY_DIRECT and paths(defined)[:1] == ["server.py"]
    # A bare name asks every routed leg and ranks the definition first (ranking/signals.py).
    bare = search(stub, "retryWithBackoff", mode="auto")
    assert bare.strategy == search_pb2.STRATEGY_RRF and paths(bare)[:1] == ["server.py"]
    assert any(b.name == "defines_query_name" for b in bare.hits[0].boosts)
    # No definition of this name: the definition leg alone would answer nothing; the others still find the text.
    undefined = search(stub, "where is missing_name defined", mode="auto")
    assert undefined.intent == search_pb2.INTENT_FIND_DEFINITION
    assert undefined.strategy == search_pb2.STRATEGY_RRF_AFTER_DIRECT and "config.py" in paths(undefined)


def test_a_question_whose_words_do_not_meet_as_written_is_answered_from_word_stems(
    stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path
) -> None:
    index(stub, write_repo(tmp_path / "demo"))

    def keyword_report(resp: search_pb2.SearchResponse) -> str:
        [report] = [r for r in resp.legs if r.leg == common_pb2.LEG_KEYWORD]
        return report.detail

    # No chunk says "configurations" or "parsed"; their stems meet in config.py's "Configuration" and parse_config.
    asked = search(stub, "how are configurations parsed", "auto")
    assert "word stems" in keyword_report(asked) and paths(asked)[0] == "config.py"
    # The keyword mode asks the words as written.
    assert "word stems" not in keyword_report(search(stub, "how are configurations parsed", "keyword"))
