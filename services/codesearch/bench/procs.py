"""`codesearch serve` as real subprocesses, for fault tests and benchmarks: start, wait healthy, kill -9, restart."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

START_TIMEOUT_S = 60.0  # imports (tantivy, tree-sitter, grpc) take seconds on a busy 2-core machine
HEALTH_POLL_S = 0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(
    address: str, timeout_s: float = START_TIMEOUT_S, proc: subprocess.Popen | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"server on {address} exited with status {proc.returncode}")
            try:
                resp = stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(HEALTH_POLL_S)
    raise TimeoutError(f"server on {address} not healthy after {timeout_s:.0f} s")


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
            wait_healthy(self.address, proc=self.proc)
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
