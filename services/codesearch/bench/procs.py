"""`codesearch serve` as real subprocesses, for fault tests and benchmarks: start, wait healthy, kill -9, restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from codesearch.common.health_check import free_port, wait_healthy

START_TIMEOUT_S = 60.0  # imports (tantivy, tree-sitter, grpc) take seconds on a busy 2-core machine


class ServerProcess:
    """One `codesearch serve SERVICES` process on a fixed port (so a restart comes back at the same address)."""

    def __init__(
        self, services: list[str], home: Path, env: dict[str, str] | None = None, port: int = 0
    ) -> None:
        self.services = services
        self.home = home
        self.port = port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, "CODESEARCH_HOME": str(home), **(env or {})}
        self.log_path = home.parent / f"serve-{'-'.join(services)}-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> ServerProcess:
        self.home.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it for its lifetime
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codesearch.cli.main", "serve", *self.services, "--listen", self.address],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        if wait:
            wait_healthy(self.address, START_TIMEOUT_S, proc=self.proc)
        return self

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""
