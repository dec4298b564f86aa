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
from codesearch.common.models.lookup import resolve_model_path
from codesearch.config import Settings
from codesearch.vector.static_model import distilled_dir, is_static_model_dir

SERVER_LOG = "demo-server.log"  # in the data home: the server's own log lines stay out of the demo's output
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
    ("how are temporary directories cleaned up", "semantic"),  # the vector leg alone: complete after indexing
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
    parser.add_argument("--verbose", action="store_true", help="list every file the index skipped")


def _serving(address: str) -> bool:
    try:
        wait_healthy(address, ALREADY_RUNNING_CHECK_S, channel=channel(address))
        return True
    except TimeoutError:
        return False


def _static_model_ready(settings: Settings) -> bool:
    """Whether the static tier's model is already made (a distilled one lives in the model cache)."""
    path, _ = resolve_model_path(settings.static_model)
    if not Path(path).is_dir() or is_static_model_dir(Path(path)):
        return True  # a model2vec model as is: nothing to make
    return is_static_model_dir(distilled_dir(path, settings.model_cache))


def run(args: argparse.Namespace) -> int:
    server: subprocess.Popen[bytes] | None = None
    if _serving(args.address):
        print(f"using the codesearch server already running at {args.address}")
    else:
        settings = Settings.from_env()
        settings.home.mkdir(parents=True, exist_ok=True)
        log_path = settings.home / SERVER_LOG
        print(f"starting codesearch serve on {args.address} (its log: {log_path}) ...", flush=True)
        if not _static_model_ready(settings):
            print(
                "first run on this machine: the static embedding model is distilled once (~2 min)", flush=True
            )
        env = dict(os.environ, CODESEARCH_LISTEN=args.address)
        with open(log_path, "ab") as log_file:
            server = subprocess.Popen(
                [sys.executable, "-m", "codesearch.cli.main", "serve", "--address", args.address],
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_healthy(args.address, SERVER_START_TIMEOUT_S, proc=server, channel=channel(args.address))
        except (TimeoutError, RuntimeError) as e:
            raise CliError(f"the server did not start on {args.address} ({e}); see {log_path}") from None
    try:
        # The same commands a user types, parsed by the real parser, so the demo cannot drift from the CLI.
        from codesearch.cli.main import build_parser

        parser, runners = build_parser()
        commands = [["index", str(Path(args.path)), "--name", args.name, *DEMO_EXCLUDES]]
        commands[0] += ["--verbose"] if args.verbose else []
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
