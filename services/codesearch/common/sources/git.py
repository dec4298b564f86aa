"""One commit of a git repository, read straight from its object store (libgit2 through pygit2).

No checkout and no working tree: only what the commit tracks can be indexed, so untracked and .gitignore'd
files never enter. The delta between two commits comes from a tree diff, which compares object ids and never
reads an unchanged file.
"""

from __future__ import annotations

from pathlib import Path

import pathspec
import pygit2

from codesearch.common.errors import invalid
from codesearch.common.sources import Listing, SourceFile, check_text
from codesearch.common.walker import SKIP_DIRS, is_lock_file

SYMLINK_MODE = 0o120000  # git stores a symlink as a blob holding its target: not content to search


def open_repository(root: Path) -> pygit2.Repository:
    """The repository at root (a working tree or a bare repository), or INVALID_ARGUMENT."""
    try:
        return pygit2.Repository(str(root))
    except pygit2.GitError:
        raise invalid(f"{root}: not a git repository") from None


def resolve_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit:
    """A branch, tag (annotated or not), commit id or any rev-parse expression, peeled to its commit."""
    try:
        commit = repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise invalid(f"{ref!r} is not a branch, tag or commit of {repo.path}") from None
    return commit


class GitSource:
    """The files a commit tracks. `exclude`: extra .gitignore-style patterns, as for a directory."""

    def __init__(self, root: Path, ref: str, max_file_bytes: int, exclude: list[str] | None = None) -> None:
        self.repo = open_repository(root)
        self.ref = ref
        self.commit = resolve_commit(self.repo, ref)
        self.max_file_bytes = max_file_bytes
        self.exclude = pathspec.PathSpec.from_lines("gitignore", exclude) if exclude else None

    def listing(self) -> Listing:
        listing = Listing(commit=str(self.commit.id))
        self._walk(self.commit.tree, "", listing)
        listing.files.sort(key=lambda f: f.rel_path)
        return listing

    def _walk(self, tree: pygit2.Tree, prefix: str, listing: Listing) -> None:
        for entry in tree:
            name = entry.name or ""
            rel = f"{prefix}{name}"
            if self.exclude is not None and self.exclude.match_file(
                rel + "/" if entry.type_str == "tree" else rel
            ):
                continue
            if entry.type_str == "tree":
                if name not in SKIP_DIRS:
                    subtree = self.repo[entry.id]
                    assert isinstance(subtree, pygit2.Tree)  # a "tree" entry names a tree
                    self._walk(subtree, rel + "/", listing)
            elif entry.type_str == "commit":
                listing.skipped.append((rel, "submodule (its commit is not in this repository)"))
            elif entry.filemode == SYMLINK_MODE:
                listing.skipped.append((rel, "symlink"))
            elif is_lock_file(name):
                listing.skipped.append((rel, "lock file"))
            elif name != ".gitignore":
                listing.files.append(SourceFile(rel, str(entry.id)))

    def read(self, file: SourceFile) -> tuple[bytes | None, str]:
        blob = self.repo[file.key]
        assert isinstance(blob, pygit2.Blob)  # the listing holds blobs only
        return check_text(blob.data, self.max_file_bytes)

    def changed_since(self, previous_commit: str) -> set[str] | None:
        """Both sides of every changed entry (a rename is its old and its new path); None when the previous
        commit is unknown here (history rewritten, or never indexed)."""
        if not previous_commit:
            return None
        try:
            previous = self.repo[previous_commit].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        diff = previous.tree.diff_to_tree(self.commit.tree)
        changed: set[str] = set()
        for delta in diff.deltas:
            changed.add(delta.old_file.path)
            changed.add(delta.new_file.path)
        return changed
