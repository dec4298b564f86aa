"""Shared fixtures: real gRPC servers on 127.0.0.1, a data directory per test, the shared eval set."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from codesearch.common.aio_thread import Registrar, ThreadedServer
from codesearch.config import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
# CODESEARCH_SHARED_EVAL points a worktree outside the checkout at the shared eval sets.
SHARED_EVAL = Path(os.environ.get("CODESEARCH_SHARED_EVAL") or REPO_ROOT.parent / "shared" / "eval")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a fresh data directory under the test's tmp_path, and an embedding cache of its own (the
    default one is machine-wide: tests counting model calls must not find another run's vectors there)."""
    env = {
        "CODESEARCH_HOME": str(tmp_path / "home"),
        "CODESEARCH_EMBEDDING_CACHE": str(tmp_path / "emb.sqlite"),
    }
    return Settings.from_env(env)


@pytest.fixture
def start_server() -> Iterator:
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
def git() -> Callable[..., str]:
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
