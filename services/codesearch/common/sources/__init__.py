"""Where an index run reads files from: a directory as it is on disk, or one commit of a git repository.

The indexer asks a source three things: which files there are (`listing`), the bytes of one of them (`read`),
and which paths may differ from what an earlier run indexed (`changed_since`). Everything else (hashing,
chunking, sending each leg what it lacks) is the indexer's and the same for every source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from codesearch.common.walker import BINARY_SNIFF_BYTES


@dataclass(frozen=True)
class SourceFile:
    """A file a source offers for indexing."""

    rel_path: str  # relative to the repository root, '/' separators
    key: str  # what the source reads it by: an absolute path, or a git blob id


@dataclass
class Listing:
    """The files of a source at one moment, what was left out and why, and the commit they are of."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)
    commit: str = ""  # hex id of the commit listed; "" for a directory


class Source(Protocol):
    """What the indexer needs from a place that holds files."""

    ref: str  # the ref the source was opened at ("" for a directory)

    def listing(self) -> Listing: ...

    def read(self, file: SourceFile) -> tuple[bytes | None, str]:
        """(bytes, "") for an indexable text file, or (None, the reason it is skipped)."""
        ...

    def changed_since(self, previous_commit: str) -> set[str] | None:
        """Paths that may differ from what was indexed at `previous_commit` (the listing's commit for git,
        "" for a directory); None when the source cannot tell, so that every file is read."""
        ...


def check_text(data: bytes, max_file_bytes: int) -> tuple[bytes | None, str]:
    """The size and binary checks every source applies to the bytes it read."""
    if len(data) > max_file_bytes:
        return None, f"larger than {max_file_bytes} bytes"
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary (NUL bytes)"
    return data, ""
