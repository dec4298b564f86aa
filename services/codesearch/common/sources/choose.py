"""Which source an IndexRepository request reads, and the repository name it gets by default."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from codesearch.common.errors import invalid
from codesearch.common.sources import Source
from codesearch.common.sources.directory import DirectorySource
from codesearch.common.sources.git import GitSource

MAX_CHANGED_PATHS = 100_000  # a branch switch in a large monorepo; beyond it a full run is as cheap


def open_source(
    root: Path, ref: str, max_file_bytes: int, exclude: list[str], changed_paths: list[str]
) -> Source:
    """A git source at `ref`, else the directory (with the watcher's changed paths, checked to stay inside)."""
    if ref:
        if changed_paths:
            raise invalid("changed_paths is for directory sources; a git ref's delta comes from its commits")
        return GitSource(root, ref, max_file_bytes, exclude)
    return DirectorySource(
        root, max_file_bytes, exclude, _checked_paths(changed_paths) if changed_paths else None
    )


def default_name(root: Path, ref: str) -> str:
    """ "<directory>" for a directory, "<directory>@<ref>" for a git ref ('/' in a ref becomes '-')."""
    return f"{root.name}@{ref.replace('/', '-')}" if ref else root.name


def _checked_paths(paths: list[str]) -> set[str]:
    if len(paths) > MAX_CHANGED_PATHS:
        raise invalid(
            f"{len(paths)} changed paths; the limit is {MAX_CHANGED_PATHS} (send none for a full run)"
        )
    for p in paths:
        pure = PurePosixPath(p)
        if not p or pure.is_absolute() or ".." in pure.parts or "\x00" in p:
            raise invalid(f"changed path {p!r} must be relative to the repository root, without '..'")
    return set(paths)
