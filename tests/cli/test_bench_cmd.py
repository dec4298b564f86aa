"""`codesearch bench load` on a repository with nothing to sample: one plain line and exit status 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")


def test_bench_load_over_a_repository_without_identifiers_says_so_plainly(
    tmp_path: Path, start_server: StartServer
) -> None:
    server = start_server(
        registrars(Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")}), SERVICES)
    )
    root = tmp_path / "notes"
    root.mkdir()
    (root / "notes.txt").write_text("just some words here\n")
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="notes"), timeout=60))
    done = subprocess.run(
        [sys.executable, "-m", "codesearch.cli.main", "bench", "load", "--address", server.address,
         "--seconds", "1", "--clients", "1"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "CODESEARCH_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "found no identifiers in notes" in done.stderr and "--repository NAME" in done.stderr
