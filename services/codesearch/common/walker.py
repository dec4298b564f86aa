"""Walks a repository: which files to index, and why the others are skipped.

Honours .gitignore files (every level), skips tool and dependency folders, lock files, files over the size cap,
symlinks that leave the repository, and anything that is not a regular file. Directory symlinks are never
followed, so a symlink loop cannot trap the walk.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "vendor",
        "dist",
        "build",
        "target",
        "__pycache__",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".idea",
        ".gradle",
        "bower_components",
        ".next",
        ".nuxt",
        ".cache",
        ".terraform",
        # Installed third-party packages are dependencies, like node_modules.
        "site-packages",
        "dist-packages",
    }
)
LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "poetry.lock",
        "Pipfile.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "uv.lock",
        "bun.lockb",
        "flake.lock",
        "mix.lock",
    }
)
BINARY_SNIFF_BYTES = 8192  # git's own heuristic: a NUL in the first 8 KiB means binary


@dataclass(frozen=True)
class WalkedFile:
    """A file to index."""

    rel_path: str  # relative to the repository root, '/' separators
    abs_path: Path
    size: int


@dataclass
class WalkResult:
    files: list[WalkedFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)


class _IgnoreStack:
    """The .gitignore specs in force for a directory: (directory relative to root, spec) pairs."""

    def __init__(self, specs: list[tuple[str, pathspec.PathSpec]]) -> None:
        self.specs = specs

    def with_dir(self, root: Path, rel_dir: str) -> _IgnoreStack:
        gitignore = root / rel_dir / ".gitignore" if rel_dir else root / ".gitignore"
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return self
        return _IgnoreStack([*self.specs, (rel_dir, pathspec.PathSpec.from_lines("gitignore", lines))])

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        # As git does: the deepest .gitignore with a matching pattern decides (so `!keep.log` re-includes).
        for base, spec in reversed(self.specs):
            sub = rel_path[len(base) + 1 :] if base else rel_path
            verdict = spec.check_file(sub + "/" if is_dir else sub).include
            if verdict is not None:
                return verdict
        return False


def is_hidden(rel_path: str) -> bool:
    """A dotfile or a file under a dot-directory (.github/, .hidden/): indexed, but no source of mined examples."""
    return any(part.startswith(".") for part in rel_path.split("/"))


def is_lock_file(name: str) -> bool:
    return name in LOCK_FILES or name.endswith(".lock")


def walk(root: Path, max_file_bytes: int, exclude: list[str] | None = None) -> WalkResult:
    """Every indexable file under root, in path order, plus what was skipped and why.

    `exclude`: extra .gitignore-style patterns, applied as if in a .gitignore at the root.
    """
    root = root.resolve()
    result = WalkResult()
    base = _IgnoreStack([("", pathspec.PathSpec.from_lines("gitignore", exclude))] if exclude else [])
    for item in _walk_dir(root, "", base.with_dir(root, ""), result):
        if item.size > max_file_bytes:
            result.skipped.append((item.rel_path, f"larger than {max_file_bytes} bytes"))
        else:
            result.files.append(item)
    result.files.sort(key=lambda f: f.rel_path)
    return result


def _walk_dir(root: Path, rel_dir: str, ignores: _IgnoreStack, result: WalkResult) -> Iterator[WalkedFile]:
    directory = root / rel_dir if rel_dir else root
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as e:
        result.skipped.append((rel_dir or ".", f"unreadable directory: {e.strerror}"))
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as e:
            result.skipped.append((rel, f"cannot stat: {e.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            if (
                entry.name in SKIP_DIRS
                or ignores.ignored(rel, is_dir=True)
                or _is_virtualenv(Path(entry.path))
            ):
                continue
            yield from _walk_dir(root, rel, ignores.with_dir(root, rel), result)
            continue
        if ignores.ignored(rel, is_dir=False) or entry.name == ".gitignore":
            continue
        if is_lock_file(entry.name):
            result.skipped.append((rel, "lock file"))
            continue
        if stat.S_ISLNK(st.st_mode):
            target = _symlink_target_inside(root, Path(entry.path))
            if target is None:
                result.skipped.append((rel, "symlink that leaves the repository, dangles, or is not a file"))
                continue
            st = target.stat()
        elif not stat.S_ISREG(st.st_mode):
            result.skipped.append((rel, "not a regular file (device, socket or fifo)"))
            continue
        yield WalkedFile(rel, Path(entry.path), st.st_size)


def _is_virtualenv(directory: Path) -> bool:
    """A Python virtual environment (any name: .venv, env, venv...) is recognised by its pyvenv.cfg,
    not by its name: the standard library itself has a package called `venv`."""
    return (directory / "pyvenv.cfg").is_file()


def _symlink_target_inside(root: Path, link: Path) -> Path | None:
    """The symlink's target when it is a regular file inside root; None otherwise."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, or a loop
        return None
    if not target.is_relative_to(root):
        return None
    try:
        return target if stat.S_ISREG(target.stat().st_mode) else None
    except OSError:
        return None


def read_text_file(path: Path, max_file_bytes: int) -> tuple[bytes | None, str]:
    """(bytes, "") for an indexable text file, or (None, reason). Reads once; the size is checked again."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_file_bytes + 1)
    except FileNotFoundError:
        return None, "deleted while indexing"
    except OSError as e:
        return None, f"unreadable: {e.strerror}"
    if len(data) > max_file_bytes:
        return None, f"larger than {max_file_bytes} bytes"
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary (NUL bytes)"
    return data, ""
