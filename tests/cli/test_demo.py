"""README's first command ends in `codesearch demo`: it must run end to end (here on a small repository)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codesearch.common.health_check import free_port


def test_demo_starts_a_server_indexes_and_searches(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    (repo / "archive.py").write_text(
        "def make_archive(base, fmt):\n    raise ValueError('unsupported pickle protocol')\n\n\n"
        "def urlsplit(url):\n    return url.split('/')\n\n\n"
        "def clean():\n    make_archive('a', 'zip')\n"
    )
    address = f"127.0.0.1:{free_port()}"
    env = dict(os.environ, CODESEARCH_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "codesearch.cli.main",
            "demo",
            "--path",
            str(repo),
            "--name",
            "shop",
            "--address",
            address,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "indexed shop: 1 files" in out
    assert "archive.py:5" in out  # where is urlsplit defined
    assert "archive.py:10" in out  # who calls make_archive
    assert "intent find_definition" in out and "leg definition" in out
