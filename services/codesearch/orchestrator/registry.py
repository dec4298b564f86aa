"""The orchestrator's record of indexed repositories and, per repository, the hash of every indexed file."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from codesearch.common.errors import storage_error
from codesearch.common.snapshot import atomic_write_text, read_replaced_text

REGISTRY_FILE = "repositories.json"
MANIFEST_FILE = "manifest.json"


@dataclass
class RepoRecord:
    name: str
    root: str
    index_version: int = 0
    indexed_at: str = ""
    files: int = 0
    chunks: int = 0
    commit: str = ""  # git sources: the commit the index holds
    ref: str = ""  # git sources: the ref as asked for
    chunking: str = ""  # the chunker's fingerprint at the last run: a source's delta is trusted only under it
    watched: bool = False  # the server watches the directory (IndexRepositoryRequest.watch)


class Registry:
    """Repositories by name, persisted as one JSON file replaced atomically."""

    def __init__(self, service_dir: Path) -> None:
        self.dir = service_dir
        self.path = service_dir / REGISTRY_FILE

    def load(self) -> dict[str, RepoRecord]:
        try:
            raw = json.loads(read_replaced_text(self.path))
        except FileNotFoundError:
            return {}
        return {name: RepoRecord(**rec) for name, rec in raw.items()}

    def get(self, name: str) -> RepoRecord | None:
        return self.load().get(name)

    def put(self, record: RepoRecord) -> None:
        records = self.load()
        records[record.name] = record
        self._save(records)

    def remove(self, name: str) -> bool:
        records = self.load()
        existed = records.pop(name, None) is not None
        self._save(records)
        shutil.rmtree(self.dir / name, ignore_errors=True)
        return existed

    def _save(self, records: dict[str, RepoRecord]) -> None:
        _write(self.path, json.dumps({n: asdict(r) for n, r in sorted(records.items())}, indent=1))

    def manifest(self, name: str) -> dict[str, dict[str, str]]:
        """Per leg, path -> content hash of every file that leg committed."""
        try:
            return dict(json.loads((self.dir / name / MANIFEST_FILE).read_text()))
        except FileNotFoundError:
            return {}

    def save_manifest(self, name: str, manifest: dict[str, dict[str, str]]) -> None:
        _write(self.dir / name / MANIFEST_FILE, json.dumps(dict(sorted(manifest.items()))))


def _write(path: Path, text: str) -> None:
    """Atomic write; a full or read-only disk becomes a clear status (the old file stays as it was)."""
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise storage_error(e, f"the orchestrator's {path.name}") or e from None
