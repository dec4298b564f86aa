from __future__ import annotations

import os
from pathlib import Path

from codesearch.common.languages import detect_language
from codesearch.common.walker import read_text_file, walk


def test_walk_honours_gitignore_at_every_level_and_skips_tool_dirs(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n/build_out/\n")
    (tmp_path / "src" / "gen").mkdir(parents=True)
    (tmp_path / "src" / ".gitignore").write_text("gen/\n!keep.log\n")
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    (tmp_path / "src" / "gen" / "b.py").write_text("b = 1\n")
    (tmp_path / "src" / "keep.log").write_text("kept\n")
    (tmp_path / "debug.log").write_text("x\n")
    (tmp_path / "build_out").mkdir()
    (tmp_path / "build_out" / "c.py").write_text("c\n")
    for d in (".git", "node_modules", "__pycache__", "target"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "x.py").write_text("x\n")
    (tmp_path / "package-lock.json").write_text("{}\n")
    (tmp_path / "env").mkdir()  # a virtualenv under any name is skipped...
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "env" / "lib.py").write_text("x\n")
    (tmp_path / "src" / "venv").mkdir()  # ...but a package named venv is code
    (tmp_path / "src" / "venv" / "__init__.py").write_text("x\n")
    result = walk(tmp_path, 1 << 20)
    assert [f.rel_path for f in result.files] == ["src/a.py", "src/keep.log", "src/venv/__init__.py"]
    assert ("package-lock.json", "lock file") in result.skipped


def test_size_cap_symlinks_and_special_files(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x" * 2000)
    (tmp_path / "ok.py").write_text("ok\n")
    os.symlink(tmp_path / "ok.py", tmp_path / "alias.py")  # inside: kept
    os.symlink("/etc/passwd", tmp_path / "out.py")  # escapes: refused
    os.symlink(tmp_path / "sub", tmp_path / "sub")  # loop: refused, no hang
    os.mkfifo(tmp_path / "fifo")
    result = walk(tmp_path, 1000)
    assert [f.rel_path for f in result.files] == ["alias.py", "ok.py"]
    reasons = dict(result.skipped)
    assert "larger than 1000 bytes" in reasons["big.py"]
    assert "leaves the repository" in reasons["out.py"]
    assert "sub" in reasons and "fifo" in reasons


def test_read_text_file_refuses_binary_and_vanished_files(tmp_path: Path) -> None:
    (tmp_path / "b").write_bytes(b"abc\x00def")
    assert read_text_file(tmp_path / "b", 100) == (None, "binary (NUL bytes)")
    assert read_text_file(tmp_path / "gone", 100) == (None, "deleted while indexing")
    (tmp_path / "t").write_bytes(b"caf\xe9\n")  # latin-1: kept as bytes, decoded leniently later
    assert read_text_file(tmp_path / "t", 100) == (b"caf\xe9\n", "")


def test_language_detection_by_extension_name_and_shebang() -> None:
    assert detect_language("a/b.py") == "python"
    assert detect_language("x.tsx") == "tsx"
    assert detect_language("Dockerfile") == "dockerfile"
    assert detect_language("CMakeLists.txt") == "cmake"
    assert detect_language("bin/tool", b"#!/usr/bin/env python3\n") == "python"
    assert detect_language("README") == ""


def test_exclude_patterns_apply_like_a_root_gitignore(tmp_path: Path) -> None:
    for rel in ("lib/a.py", "lib/test/t.py", "test/u.py", "x.min.js"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    result = walk(tmp_path, 1 << 20, exclude=["test/", "*.min.js"])
    assert [f.rel_path for f in result.files] == ["lib/a.py"]


def test_installed_packages_are_dependencies_not_code(tmp_path: Path) -> None:
    (tmp_path / "site-packages" / "dep").mkdir(parents=True)
    (tmp_path / "site-packages" / "dep" / "x.py").write_text("x\n")
    (tmp_path / "own.py").write_text("x\n")
    assert [f.rel_path for f in walk(tmp_path, 1 << 20).files] == ["own.py"]
