"""`codesearch index` tells what it skipped in one line of counts per reason; --verbose lists every file."""

from __future__ import annotations

from pathlib import Path

import pytest
from codesearch.cli.main import main as cli_main
from codesearch.config import Settings
from codesearch.orchestrator.indexer import MAX_WARNINGS
from codesearch.server import registrars

from tests.fixture_types import StartServer

SERVICES = ("keyword", "orchestrator")


def _tree_with_binaries(tmp_path: Path, start_server: StartServer, binaries: int) -> tuple[str, Path]:
    """(a keyword + orchestrator server's address, a tree of one source file and `binaries` binary files)."""
    server = start_server(
        registrars(Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")}), SERVICES)
    )
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("def parse(x):\n    return x\n")
    for i in range(binaries):
        (root / f"blob{i}.bin").write_bytes(bytes(range(256)) * 4)  # binary: skipped by the indexer
    return server.address, root


def test_skipped_files_are_one_line_of_counts_and_verbose_lists_them(
    tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    address, root = _tree_with_binaries(tmp_path, start_server, 12)
    assert cli_main(["index", str(root), "--name", "tree", "--quiet", "--address", address]) == 0
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if "skipped" in line and line.startswith("  ")]
    assert len(skipped) == 1, out  # one line, not twelve
    assert skipped[0].startswith("  skipped 12 files: 12 ") and "(--verbose lists them)" in skipped[0]
    assert "blob" not in out
    assert cli_main(["index", str(root), "--name", "tree", "--full", "--quiet", "--verbose",
                     "--address", address]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert sum(1 for line in out.splitlines() if "blob" in line and "skipped" in line) == 12


def test_the_counts_are_exact_past_the_warnings_the_server_lists(
    tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server lists at most MAX_WARNINGS warnings; its counts per reason still cover every skipped file."""
    skipped_files = MAX_WARNINGS + 10
    address, root = _tree_with_binaries(tmp_path, start_server, skipped_files)
    assert cli_main(["index", str(root), "--name", "tree", "--quiet", "--address", address]) == 0
    out = capsys.readouterr().out
    assert f"  skipped {skipped_files} files: {skipped_files} binary" in out, out
    assert cli_main(["index", str(root), "--name", "tree", "--full", "--quiet", "--verbose",
                     "--address", address]) == 0  # fmt: skip
    out = capsys.readouterr().out
    listed = sum(1 for line in out.splitlines() if "blob" in line and "skipped" in line)
    assert listed == MAX_WARNINGS and "... and 10 more skipped files" in out, out
