"""Entry point of the `codesearch` command."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from codesearch.cli.client import CliError, fail
from codesearch.config import ConfigError, client_address

# name -> (module, add_arguments attribute, run attribute, help)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "demo": ("demo_cmd", "add_arguments", "run", "start a server, index the standard library, search it"),
    "serve": ("serve_cmd", "add_arguments", "run", "run the server (all services, or some)"),
    "index": ("index_cmd", "add_arguments", "run", "index a directory"),
    "search": ("search_cmd", "add_arguments", "run", "search indexed repositories"),
    "status": ("status_cmd", "add_status_arguments", "run_status", "services, repositories and index state"),
    "repos": ("status_cmd", "add_repos_arguments", "run_repos", "list indexed repositories"),
    "delete": ("status_cmd", "add_delete_arguments", "run_delete", "delete a repository's index"),
    "eval": ("eval_cmd", "add_arguments", "run", "measure retrieval quality on a query set"),
    "bench": ("bench_cmd", "add_arguments", "run", "benchmarks (run on demand)"),
    "context": ("context_cmd", "add_arguments", "run", "a context pack for a question, in a budget"),
    "mcp": ("mcp_cmd", "add_arguments", "run", "serve the Model Context Protocol over stdio (for agents)"),
}


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    parser = argparse.ArgumentParser(prog="codesearch", description="Hybrid code search over gRPC.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    runners: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, (module_name, add_attr, run_attr, help_text) in COMMANDS.items():
        try:
            module = importlib.import_module(f"codesearch.cli.{module_name}")
        except ModuleNotFoundError as e:
            if e.name != f"codesearch.cli.{module_name}":
                raise
            continue  # an optional command whose module is not part of this build
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--address",
            default=client_address(),
            help="server address HOST:PORT (default: $CODESEARCH_ADDR or 127.0.0.1:50551)",
        )
        getattr(module, add_attr)(p)
        runners[name] = getattr(module, run_attr)
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    try:
        return runners[args.command](args)
    except (CliError, ConfigError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return fail("interrupted")
    except OSError as e:
        return fail(str(e))


if __name__ == "__main__":
    sys.exit(main())
