"""Waiting for a gRPC server to report SERVING (grpc.health.v1), and picking a free local port."""

from __future__ import annotations

import socket
import subprocess
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

HEALTH_POLL_S = 0.1  # a server that is starting answers within a few polls of its port opening


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(
    address: str,
    timeout_s: float,
    proc: subprocess.Popen | None = None,
    channel: grpc.Channel | None = None,
) -> None:
    """Returns once the server at `address` reports SERVING; TimeoutError after `timeout_s`, RuntimeError if
    `proc` (the server's process) exits first. `channel`: a ready channel (TLS, token) instead of a plain one."""
    deadline = time.monotonic() + timeout_s
    with channel or grpc.insecure_channel(address) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
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
