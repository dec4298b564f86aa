"""`codesearch demo`: start a server, index a real codebase (this Python's standard library), search it.

The searches go through the same gRPC API as every client; the server runs as a child process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from codesearch.cli import index_cmd, search_cmd
from codesearch.cli.client import CliError, channel

SERVER_START_TIMEOUT_S = (
    120.0  # first start imports torch and tree-sitter grammars: tens of seconds on 2 cores
)
DEMO_QUERIES = (
    ("where is urlsplit defined", "auto"),
    ("who calls make_archive", "auto"),
    ('"unsupported pickle protocol"', "auto"),
    ("how are temporary directories cleaned up", "auto"),
    (r"def \w+_cache\(", "regex"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--path",
        default=sysconfig.get_paths()["stdlib"],
        help="codebase to index (default: the standard library)",
    )
    parser.add_argument("--name", default="stdlib")
    parser.add_argument("--keep-running", action="store_true", help="leave the server running afterwards")


def _serving(address: str) -> bool:
    try:
        stub = health_pb2_grpc.HealthStub(channel(address))
        resp = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
        return resp.status == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False


def run(args: argparse.Namespace) -> int:
    server: subprocess.Popen[bytes] | None = None
    if _serving(args.address):
        print(f"using the codesearch server already running at {args.address}")
    else:
        print(f"starting codesearch serve on {args.address} ...", flush=True)
        env = dict(os.environ, CODESEARCH_LISTEN=args.address)
        server = subprocess.Popen(
            [sys.executable, "-m", "codesearch.cli.main", "serve", "--address", args.address], env=env
        )
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not _serving(args.address):
            if server.poll() is not None or time.monotonic() > deadline:
                raise CliError(f"the server did not start on {args.address}")
            time.sleep(0.5)
    try:
        print(f"\n$ codesearch index {args.path} --name {args.name}", flush=True)
        index_cmd.run(
            argparse.Namespace(
                address=args.address, path=str(Path(args.path)), name=args.name, full=False, quiet=False
            )
        )
        for query, mode in DEMO_QUERIES:
            print(f"\n$ codesearch search '{query}' --mode {mode} --limit 3 --explain", flush=True)
            search_cmd.run(
                argparse.Namespace(
                    address=args.address,
                    query=query,
                    repo=[args.name],
                    mode=mode,
                    preset="default",
                    limit=3,
                    case_sensitive=False,
                    lang=[],
                    path="",
                    rerank="auto",
                    json=False,
                    explain=True,
                )
            )
    finally:
        if server is not None and not args.keep_running:
            server.terminate()
            server.wait(timeout=30)
        elif server is not None:
            print(f"\nserver still running (pid {server.pid}) at {args.address}")
    return 0
