"""`codesearch eval` against a REAL server (keyword, graph and orchestrator in one process) on a tiny repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.config import Settings
from codesearch.eval.mine import mine_queries
from codesearch.eval.runfile import Query, write_queries
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

from .test_mine import write_repo

server_mod = pytest.importorskip("codesearch.server")
# The keyword leg needs the Rust extension (native/, built with maturin); without it no server can start.
pytest.importorskip("codesearch._native")

SERVICES = ("keyword", "graph", "orchestrator")  # no model needed; vector and rerank have their own tests


@pytest.fixture
def served_repo(tmp_path: Path, start_server: StartServer) -> tuple[str, Path]:
    root = write_repo(tmp_path / "repo")
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(server_mod.registrars(settings, SERVICES))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    progress = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="tiny")))
    assert progress[-1].phase == search_pb2.INDEX_PHASE_DONE
    return server.address, root


def test_eval_modes_and_ripgrep_through_real_server(
    served_repo: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, root = served_repo
    queries, _ = mine_queries(root, seed=1, per_class=10)
    # Quotes around blanks: the literal pattern is empty, which the server must refuse (INVALID_ARGUMENT).
    queries.append(
        Query("blank", "exact_match", "quoted", '"   "', [{"path": "app.py", "line": 1, "end_line": 1}])
    )
    qfile = tmp_path / "q.jsonl"
    write_queries(qfile, queries)
    out = tmp_path / "out"
    args = [
        str(qfile),
        "--address",
        address,
        "--repo",
        "tiny",
        "--modes",
        "keyword,literal,regex",
        "--out",
        str(out),
        "--concurrency",
        "2",
        "--plot",
        str(tmp_path / "mrr.png"),
    ]
    if shutil.which("rg"):
        args += ["--baseline", "ripgrep", "--root", str(root)]
    assert eval_main(args) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    runs = summary["runs"]
    assert set(runs) >= {"keyword", "literal", "regex"}
    for name, run in runs.items():
        lines = (out / run["run_file"]).read_text().splitlines()
        assert len(lines) == len(queries), name
        assert f"run: {name}" in printed
        assert run["summary"]["ALL"]["n"] == len(queries)
        assert run["summary"]["ALL"]["errors"] == 0
    # The unique error message is found verbatim by literal and regex search; the blank one is refused,
    # counted, and scored as zero results.
    # (Regex mode gets re.escape("   "), a valid pattern that matches indentation: not refused.)
    for name in ("literal", "regex"):
        exact = runs[name]["summary"]["exact_match/quoted"]
        assert exact["hit10"] == 0.5, name
        assert exact["invalid"] == (1 if name == "literal" else 0), name
    blank = json.loads((out / runs["literal"]["run_file"]).read_text().splitlines()[-1])
    assert blank["id"] == "blank" and blank["results"] == [] and blank["error"] == "INVALID_ARGUMENT"
    assert runs["literal"]["summary"]["exact_match/quoted"]["zero"] == 0.5
    assert "1 queries answered INVALID_ARGUMENT" in printed
    assert runs["keyword"]["summary"]["ALL"]["mrr10"] > 0
    if "ripgrep" in runs:
        # The unique message is ripgrep's first hit; the blank query matches indentation, never the gold.
        assert runs["ripgrep"]["summary"]["exact_match"]["hit1"] == 0.5
    assert (tmp_path / "mrr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_unknown_repository_is_a_clean_error(
    served_repo: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, root = served_repo
    qfile = tmp_path / "q.jsonl"
    write_queries(qfile, mine_queries(root, seed=1, per_class=1)[0])
    code = eval_main(
        [str(qfile), "--address", address, "--repo", "nope", "--modes", "keyword", "--out", str(tmp_path)]
    )
    assert code == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.model
def test_eval_waits_for_the_vector_leg_to_embed_the_repository(
    tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query set run right after indexing: the vector leg may still be embedding, and figures over part of
    the code would read as a worse model. The run waits until nothing is pending, then every answer is whole."""
    root = write_repo(tmp_path / "repo")
    settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_VECTOR_TIERS": "static"}
    )
    server = start_server(server_mod.registrars(settings, ("keyword", "vector", "graph", "orchestrator")))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="tiny")))
    queries, _ = mine_queries(root, seed=1, per_class=3)
    qfile = tmp_path / "q.jsonl"
    write_queries(qfile, queries)
    args = [str(qfile), "--address", server.address, "--repo", "tiny", "--modes", "semantic"]
    assert eval_main([*args, "--out", str(tmp_path / "out")]) == 0
    assert "embeddings complete" in capsys.readouterr().err
    status = stub.GetStatus(search_pb2.GetStatusRequest())
    assert [r.embeddings_pending for r in status.repositories if r.name == "tiny"] == [0]
