"""Sources: a git commit's listing and reads (skip rules, excludes, the delta) and the directory source's hint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from codesearch.common.errors import ServiceError
from codesearch.common.sources.choose import default_name, open_source
from codesearch.common.sources.directory import DirectorySource
from codesearch.common.sources.git import GitSource

from tests.fixture_types import Git

MAX_BYTES = 1 << 20


@pytest.fixture
def repo(tmp_path: Path, git: Git) -> Path:
    root = tmp_path / "r"
    (root / "src").mkdir(parents=True)
    (root / "node_modules").mkdir()
    (root / "src" / "a.py").write_text("A = 1\n")
    (root / "src" / "big.txt").write_bytes(b"x" * (MAX_BYTES + 1))
    (root / "blob.bin").write_bytes(b"\x00\x01")
    (root / "Cargo.lock").write_text("lock\n")
    (root / "node_modules" / "dep.js").write_text("dep\n")
    (root / "gen").mkdir()
    (root / "gen" / "out.py").write_text("GENERATED = 1\n")
    os.symlink("src/a.py", root / "link.py")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root


def test_listing_applies_the_walkers_rules_to_tracked_files(repo: Path, git: Git) -> None:
    source = GitSource(repo, "main", MAX_BYTES, exclude=["gen/"])
    listing = source.listing()
    assert listing.commit == git(repo, "rev-parse", "main")
    assert [f.rel_path for f in listing.files] == ["blob.bin", "src/a.py", "src/big.txt"]
    assert dict(listing.skipped) == {"Cargo.lock": "lock file", "link.py": "symlink"}
    reads = {f.rel_path: source.read(f) for f in listing.files}
    assert reads["src/a.py"] == (b"A = 1\n", "")
    assert reads["blob.bin"] == (None, "binary (NUL bytes)")
    assert reads["src/big.txt"][0] is None and "larger than" in reads["src/big.txt"][1]


def test_delta_names_both_sides_of_a_rename_and_nothing_unchanged(repo: Path, git: Git) -> None:
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "mv", "src/a.py", "src/b.py")
    (repo / "gen" / "out.py").write_text("GENERATED = 2\n")
    git(repo, "commit", "-qam", "two")
    source = GitSource(repo, "HEAD", MAX_BYTES)
    assert source.changed_since(first) == {"src/a.py", "src/b.py", "gen/out.py"}
    assert source.changed_since("") is None
    assert source.changed_since("0" * 40) is None  # a commit this repository does not have


def test_directory_hint_and_names(tmp_path: Path) -> None:
    assert DirectorySource(tmp_path, MAX_BYTES).changed_since("") is None
    assert DirectorySource(tmp_path, MAX_BYTES, changed_hint={"a.py"}).changed_since("") == {"a.py"}
    assert default_name(Path("/x/proj"), "feature/login") == "proj@feature-login"
    assert default_name(Path("/x/proj"), "") == "proj"
    for bad in (["/etc/passwd"], ["../x"], [""]):
        with pytest.raises(ServiceError):
            open_source(tmp_path, "", MAX_BYTES, [], bad)
    with pytest.raises(ServiceError):
        open_source(tmp_path, "main", MAX_BYTES, [], ["a.py"])
