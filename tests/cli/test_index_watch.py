"""`codesearch index DIR --watch` as a user runs it: a subprocess against a real server, an edit, then Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

SERVICES = ("keyword", "orchestrator")
SETTLE_TIMEOUT_S = 60.0  # a cold CLI start (imports) plus two runs on 2 busy cores


def test_watch_reindexes_an_edit_and_stops_on_ctrl_c(tmp_path: Path, start_server: StartServer) -> None:
    server = start_server(
        registrars(Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")}), SERVICES)
    )
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("A = 'before the edit'\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codesearch.cli.main",
            "index",
            str(root),
            "--watch",
            "--address",
            server.address,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:

        def found(text: str) -> bool:
            request = search_pb2.SearchRequest(query=text, mode=search_pb2.SEARCH_MODE_LITERAL, no_cache=True)
            try:
                return bool(stub.Search(request).hits)
            except grpc.RpcError:  # not indexed yet
                return False

        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while not found("before the edit"):
            assert time.monotonic() < deadline and proc.poll() is None, "the first run never landed"
            time.sleep(0.05)
        (root / "a.py").write_text("A = 'after the edit'\n")
        while not found("after the edit"):
            assert time.monotonic() < deadline and proc.poll() is None, "the edit was never indexed"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
    assert "1 paths changed" in output and "1 read" in output
