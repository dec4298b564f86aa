"""A directory as it is on disk: the walker's files (with its .gitignore and skip rules), read from disk."""

from __future__ import annotations

from pathlib import Path

from codesearch.common.sources import Listing, SourceFile
from codesearch.common.walker import read_text_file, walk


class DirectorySource:
    """`changed_hint`: the paths a watcher saw change since the last run; None means "read everything"."""

    ref = ""

    def __init__(
        self,
        root: Path,
        max_file_bytes: int,
        exclude: list[str] | None = None,
        changed_hint: set[str] | None = None,
    ) -> None:
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.exclude = exclude or []
        self.changed_hint = changed_hint

    def listing(self) -> Listing:
        walked = walk(self.root, self.max_file_bytes, self.exclude)
        files = [SourceFile(f.rel_path, str(f.abs_path)) for f in walked.files]
        return Listing(files=files, skipped=list(walked.skipped))

    def read(self, file: SourceFile) -> tuple[bytes | None, str]:
        return read_text_file(Path(file.key), self.max_file_bytes)

    def changed_since(self, previous_commit: str) -> set[str] | None:
        return set(self.changed_hint) if self.changed_hint is not None else None
