"""`python -m codesearch_lab.bench.latency` against two real servers: p50/p99 per class with their ratio, the servers'
CPU per query, and the answers that differ (none for the same index and code, some for another index)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from codesearch_lab.bench import latency

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")  # no model needed; meaning queries go to BM25 alone
MODULE = '''"""A cache of fetched pages that retries the connection."""


class PageCache:
    """Keeps fetched pages by address until they expire."""

    def __init__(self):
        self.pages = {}

    def lookup(self, address):
        return self.pages.get(address)


def connect(host, retries=3):
    for attempt in range(retries):
        if PageCache().lookup(host) is not None:
            return attempt
    raise ConnectionError("no answer from the remote host")
'''
QUERIES = [
    ("d1", "definition", "PageCache"),
    ("d2", "definition", "where is connect defined"),
    ("r1", "references", "who calls lookup"),
    ("e1", "exact_match", '"no answer from the remote host"'),
    ("c1", "concept", "how does the client retry a connection"),
]


@pytest.fixture
def query_file(tmp_path: Path) -> Path:
    path = tmp_path / "queries.jsonl"
    rows = [{"id": i, "klass": k, "variant": "", "query": q, "gold": []} for i, k, q in QUERIES]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _server_with(start_server: StartServer, home: Path, files: dict[str, str]) -> str:
    repo = home / "repo"
    repo.mkdir(parents=True)
    for name, text in files.items():
        (repo / name).write_text(text)
    server = start_server(registrars(Settings.from_env({"CODESEARCH_HOME": str(home / "data")}), SERVICES))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="repo")))
    return server.address


def test_ratio_per_class_and_identical_answers(
    tmp_path: Path, start_server: StartServer, query_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {"client.py": MODULE, "settings.py": MODULE.replace("connect", "reconnect")}
    a = _server_with(start_server, tmp_path / "a", files)
    b = _server_with(start_server, tmp_path / "b", files)
    pid = os.getpid()  # both servers run in this process: its CPU is counted for each
    latency.main(
        [str(query_file), "--repo", "repo", "--address", a, "--baseline", b, "--pids", f"{pid},{pid}"]
    )
    out = capsys.readouterr().out
    for klass in ("definition", "references", "exact_match", "concept", "ALL"):
        row = re.search(rf"^{klass}\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
        assert row, out
        n, cand, base, ratio = int(row[1]), float(row[2]), float(row[3]), float(row[4])
        assert n == (5 if klass == "ALL" else sum(k == klass for _i, k, _q in QUERIES))
        assert cand > 0 and base > 0 and ratio == pytest.approx(cand / base, rel=0.05)  # both printed rounded
    assert re.search(r"server CPU per query: candidate [\d.]+ ms, baseline [\d.]+ ms, ratio [\d.]+", out)
    assert "answers that differ (hits, scores, confidence): 0 of 5" in out


def test_a_different_index_is_reported(
    tmp_path: Path, start_server: StartServer, query_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _server_with(start_server, tmp_path / "a", {"client.py": MODULE})
    b = _server_with(start_server, tmp_path / "b", {"client.py": MODULE, "other.py": MODULE})
    latency.main([str(query_file), "--repo", "repo", "--address", a, "--baseline", b])
    out = capsys.readouterr().out
    differ = re.search(r"answers that differ \(hits, scores, confidence\): (\d+) of 5: (.+)$", out, re.M)
    assert differ and int(differ[1]) > 0, out
    assert "server CPU" not in out  # no process ids given


def test_a_pid_that_spent_no_cpu_is_named_not_divided_by() -> None:
    """A pid that is not the server's (a shell that started it, say) spends no CPU: the report says so."""
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel("127.0.0.1:1"))
    candidate = latency.Server("candidate", "127.0.0.1:1", 111, stub, cpu_s=0.5)
    baseline = latency.Server("baseline", "127.0.0.1:2", 222, stub, cpu_s=0.0)
    for s in (candidate, baseline):
        s.ms["concept"] = [10.0, 12.0]
    text = latency.report(candidate, baseline)
    assert "no CPU time seen in process 222 (not the server's pid?)" in text and "ratio" in text
