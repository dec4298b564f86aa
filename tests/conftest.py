"""Shared fixtures: real gRPC servers on 127.0.0.1, a data directory per test, the shared eval set."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from codesearch.common.aio_thread import Registrar, ThreadedServer
from codesearch.config import Settings

from tests.fixture_types import Git, StartServer

REPO_ROOT = Path(__file__).resolve().parents[1]
# CODESEARCH_SHARED_EVAL points a worktree outside the checkout at the shared eval sets.
SHARED_EVAL = Path(os.environ.get("CODESEARCH_SHARED_EVAL") or REPO_ROOT.parent / "shared" / "eval")


@pytest.fixture(autouse=True)
def own_embedding_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default embedding cache is one per machine: each test gets its own instead, so no test finds vectors
    another run left there (an upgrade a test holds back would complete from them, a count of model calls
    would drop). A test that names CODESEARCH_EMBEDDING_CACHE keeps that file."""
    default = tmp_path / "embeddings.sqlite"
    configured = Settings.embedding_cache_file
    monkeypatch.setattr(
        Settings, "embedding_cache_file", lambda self: configured(self) if self.embedding_cache else default
    )
    return default


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a fresh data directory under the test's tmp_path."""
    return Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})


@pytest.fixture
def start_server() -> Iterator[StartServer]:
    """start_server([registrar, ...]) -> ThreadedServer; every server is stopped at teardown."""
    servers: list[ThreadedServer] = []

    def start(registrars: list[Registrar]) -> ThreadedServer:
        server = ThreadedServer(registrars).start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def shared_eval() -> Path:
    """../shared/eval beside the repository (read-only); tests that need it skip plainly when it is absent."""
    if not SHARED_EVAL.is_dir():
        pytest.skip(f"{SHARED_EVAL} is not present")
    return SHARED_EVAL


@pytest.fixture
def git() -> Git:
    """git(repo, *args) -> stdout: the git command with a fixed identity and no user configuration."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": os.environ["PATH"],
    }

    def run(repo: Path, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
        )
        return done.stdout.strip()

    return run
