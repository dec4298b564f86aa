"""`codesearch demo`: start a server, index a real codebase (this Python's standard library), search it.

The searches go through the same gRPC API as every client; the server runs as a child process.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from codesearch.cli.client import CliError, channel
from codesearch.common.health_check import wait_healthy

SERVER_START_TIMEOUT_S = (
    120.0  # first start imports torch and tree-sitter grammars: tens of seconds on 2 cores
)
ALREADY_RUNNING_CHECK_S = 1.0  # a server that is up answers its health check at once
# The standard library's own test suites and tools are half its size; the demo indexes the library itself.
DEMO_EXCLUDES = [
    "--exclude",
    "test/",
    "--exclude",
    "tests/",
    "--exclude",
    "idlelib/",
    "--exclude",
    "lib2to3/",
]
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
        wait_healthy(address, ALREADY_RUNNING_CHECK_S, channel=channel(address))
        return True
    except TimeoutError:
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
        try:
            wait_healthy(args.address, SERVER_START_TIMEOUT_S, proc=server, channel=channel(args.address))
        except (TimeoutError, RuntimeError) as e:
            raise CliError(f"the server did not start on {args.address} ({e})") from None
    try:
        # The same commands a user types, parsed by the real parser, so the demo cannot drift from the CLI.
        from codesearch.cli.main import build_parser

        parser, runners = build_parser()
        commands = [["index", str(Path(args.path)), "--name", args.name, *DEMO_EXCLUDES]]
        commands += [
            ["search", query, "--repo", args.name, "--mode", mode, "--limit", "3", "--explain"]
            for query, mode in DEMO_QUERIES
        ]
        for argv in commands:
            print("\n$ codesearch " + " ".join(shlex.quote(a) for a in argv), flush=True)
            parsed = parser.parse_args([*argv, "--address", args.address])
            runners[parsed.command](parsed)
    finally:
        if server is not None and not args.keep_running:
            server.terminate()
            server.wait(timeout=30)
        elif server is not None:
            print(f"\nserver still running (pid {server.pid}) at {args.address}")
    return 0
