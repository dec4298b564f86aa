"""The command line parses what README.md shows, and reports failures as one plain line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from codesearch.cli.main import build_parser

README_COMMANDS = [
    ["serve"],
    ["serve", "all"],
    ["serve", "keyword", "graph", "vector", "--listen", "127.0.0.1:50561"],
    ["serve", "orchestrator"],
    ["index", "/tmp/x", "--name", "x"],
    ["index", "/tmp/x", "--embedded"],
    ["index", "/tmp/x", "--ref", "main"],
    ["index", "/tmp/x", "--watch"],
    ["index", "/tmp/x", "--serve-watch"],
    ["search", "where is parseConfig defined"],
    ["search", "who calls parse_config", "--explain"],
    ["search", r"def \w+_cache\(", "--mode", "regex"],
    ["search", "retry", "--json", "--limit", "5"],
    ["status"],
    ["repos"],
    ["delete", "x"],
    ["demo"],
    ["context", "how does it work", "--budget", "12000"],
    ["mcp", "--address", "127.0.0.1:50551"],
    ["eval", "q.jsonl", "--repo", "x", "--modes", "auto,keyword"],
    ["bench", "load", "--seconds", "5", "--clients", "2"],
    ["bench", "scale", "--sizes", "1,2", "--corpus", "/tmp/x", "--queries", "q.jsonl"],
]


@pytest.mark.parametrize("argv", README_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_readme_commands_parse(argv: list[str]) -> None:
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    assert args.command in runners


def test_unreachable_server_is_one_plain_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codesearch.cli.main", "status", "--address", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "codesearch: cannot reach a codesearch server at 127.0.0.1:1"
    )
