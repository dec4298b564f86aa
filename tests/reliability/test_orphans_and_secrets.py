"""Orphaned partial indexes are cleaned at start; secrets and system directories are not indexed by default
(issue 20). Real servers on 127.0.0.1, real indexes on disk."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from codesearch.common.sensitive import secret_reason
from codesearch.config import Settings
from codesearch.orchestrator.registry import Registry
from codesearch.server import registrars
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")
CLEANUP_WAIT_S = 30.0
PRIVATE_KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
SHADOW = b"root:$6$saltsalt$" + b"A" * 86 + b":19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"


def _stubs(address: str) -> tuple[search_pb2_grpc.SearchServiceStub, keyword_pb2_grpc.KeywordServiceStub]:
    channel = grpc.insecure_channel(address)
    return search_pb2_grpc.SearchServiceStub(channel), keyword_pb2_grpc.KeywordServiceStub(channel)


def _keyword_repos(keyword: keyword_pb2_grpc.KeywordServiceStub) -> set[str]:
    return {
        s.repository for s in keyword.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(), timeout=10).bm25
    }


def test_orphaned_leg_index_is_deleted_at_start(tmp_path: Path, start_server: StartServer) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def orphan_marker():\n    return 1\n")
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    first = start_server(registrars(settings, SERVICES))
    search, keyword = _stubs(first.address)
    list(search.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="kept"), timeout=120))
    list(search.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="cut"), timeout=120))
    first.stop()
    # As after a kill mid-index of a new repository: the legs committed it, the registry never recorded it.
    assert Registry(settings.service_dir("orchestrator")).remove("cut")
    second = start_server(registrars(settings, SERVICES))
    _search, keyword = _stubs(second.address)
    until = time.monotonic() + CLEANUP_WAIT_S
    while "cut" in _keyword_repos(keyword) and time.monotonic() < until:
        time.sleep(0.2)
    assert _keyword_repos(keyword) == {"kept"}


@pytest.mark.parametrize(
    ("path", "data", "secret"),
    [
        (".env", b"API_KEY=abc\n", True),
        ("config/.env.production", b"X=1\n", True),
        (".env.example", b"API_KEY=changeme\n", False),
        ("deploy/id_rsa", b"anything", True),
        ("home/.ssh/config", b"Host x\n", True),
        ("certs/server.pem", b"cert", True),
        ("notes/readme.txt", PRIVATE_KEY, True),
        ("backup/passwords", SHADOW, True),
        ("src/credentials.py", b"def load_credentials():\n    pass\n", False),
        ("src/parse_key.py", b"def parse_key(k):\n    return k\n", False),
    ],
)
def test_secret_files_are_recognised(path: str, data: bytes, secret: bool) -> None:
    assert bool(secret_reason(path, data)) == secret


def test_secrets_are_not_indexed_unless_allowed(tmp_path: Path, start_server: StartServer) -> None:
    root = tmp_path / "repo"
    (root / "keys").mkdir(parents=True)
    (root / "code.py").write_text("def visible_marker():\n    return 1\n")
    (root / ".env").write_text("SECRET_MARKER_ENV=hunter2\n")
    (root / "keys" / "deploy.txt").write_bytes(PRIVATE_KEY.replace(b"b3Bl", b"SECRET_MARKER_KEY b3Bl"))
    (root / "shadow.bak").write_bytes(SHADOW.replace(b"daemon", b"SECRET_MARKER_SHADOW"))
    for allow, expect in (("", set()), ("1", {".env", "keys/deploy.txt", "shadow.bak"})):
        env = {"CODESEARCH_HOME": str(tmp_path / f"home{allow}"), "CODESEARCH_INDEX_SECRETS": allow}
        srv = start_server(registrars(Settings.from_env(env), SERVICES))
        search, keyword = _stubs(srv.address)
        list(search.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="r"), timeout=120))
        grep = keyword.Grep(keyword_pb2.GrepRequest(pattern="SECRET_MARKER", limit=50), timeout=30)
        assert {h.location.path for h in grep.hits} == expect
        assert keyword.Grep(keyword_pb2.GrepRequest(pattern="visible_marker", limit=5), timeout=30).hits


def test_system_directories_are_refused_by_default(tmp_path: Path, start_server: StartServer) -> None:
    srv = start_server(registrars(Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")}), SERVICES))
    search, _ = _stubs(srv.address)
    for path in ("/etc", "/proc/self", "/"):
        with pytest.raises(grpc.RpcError) as err:
            list(search.IndexRepository(search_pb2.IndexRepositoryRequest(path=path, name="sys"), timeout=60))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION, (path, err.value.details())
        details = err.value.details()
        assert details is not None
        assert "CODESEARCH_ALLOWED_ROOTS" in details
