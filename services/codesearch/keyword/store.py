"""One repository's keyword data on disk: a BM25 index, a trigram index and a file table, per generation.

<home>/keyword/<repo>/gen-NNNNNN/bm25/       tantivy
<home>/keyword/<repo>/gen-NNNNNN/trigram/    native trigram index (postings + content store)
<home>/keyword/<repo>/gen-NNNNNN/files.json  path -> hash, language, lines
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from codesearch import _native
from codesearch.common.filters import path_spec
from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.keyword.bm25 import Bm25Reader, ChunkDoc, write
from codesearch.v1 import common_pb2

FILES_TABLE = "files.json"


@dataclass(frozen=True)
class FileInfo:
    content_hash: str
    language: str
    lines: int
    bytes: int = 0  # 0 in generations written before sizes were recorded


@dataclass
class KeywordSnapshot:
    """A committed generation, opened. Immutable once opened: readers keep it for a whole request."""

    generation: Path
    version: int
    bm25: Bm25Reader
    trigram: _native.TrigramIndex
    files: dict[str, FileInfo]
    trigram_paths: list[str] = field(default_factory=list)

    def chunk_text(self, doc: ChunkDoc) -> str:
        """A BM25 hit's text: as stored, or its lines from the trigram store's copy of the file."""
        return doc.text if doc.text_stored else _file_lines(self.trigram, doc)

    def allowed_ids(self, languages: list[str], path_glob: str) -> list[int] | None:
        """Trigram file ids passing the filters, or None when there is no filter."""
        if not languages and not path_glob:
            return None
        spec = path_spec(path_glob)
        langs = set(languages)
        return [
            i
            for i, p in enumerate(self.trigram_paths)
            if (not langs or self.files.get(p, FileInfo("", "", 0)).language in langs)
            and (spec is None or spec.match_file(p))
        ]


def open_snapshot(generation: Path, version: int) -> KeywordSnapshot:
    table = json.loads((generation / FILES_TABLE).read_text())
    files = {p: FileInfo(**v) for p, v in table.items()}
    trigram = _native.TrigramIndex.open(str(generation / "trigram"))
    return KeywordSnapshot(
        generation, version, Bm25Reader(generation / "bm25"), trigram, files, trigram.paths()
    )


def chunk_docs(f: common_pb2.IndexedFile, text: str) -> list[ChunkDoc]:
    """A file's chunks as BM25 documents. A chunk that is the file's own lines (what the indexer sends) keeps its
    text out of the BM25 store: the snippet is read from the trigram store's copy of the file."""
    lines = text.split("\n")
    return [
        ChunkDoc(
            f.path,
            c.start_line,
            c.end_line,
            f.language,
            c.text,
            c.symbol,
            tuple(c.breadcrumb),
            text_stored=c.start_line < 1 or c.text != "\n".join(lines[c.start_line - 1 : c.end_line]),
        )
        for c in f.chunks
    ]


def _file_lines(trigram: _native.TrigramIndex, doc: ChunkDoc) -> str:
    """A chunk's lines, read from the trigram store's copy of its file."""
    data = trigram.lines(doc.path, doc.start_line, doc.end_line)
    return "" if data is None else data.decode("utf-8", errors="replace")


def apply_batch(snapdir: SnapshotDir, batch: IndexBatch) -> tuple[Path, int, int]:
    """Writes a new generation with the batch applied and commits it. Returns (generation, files, chunks)."""
    base = snapdir.current()
    old_files: dict[str, dict[str, object]] = {}
    if base is not None and not batch.replace_all:
        old_files = json.loads((base / FILES_TABLE).read_text())
    with snapdir.building() as building:
        new_paths = {f.path for f in batch.files}
        drop = (set(batch.deleted_paths) | new_paths) & set(old_files) if old_files else set()
        files = {p: v for p, v in old_files.items() if p not in drop}
        docs: list[ChunkDoc] = []
        for f in batch.files:
            text = f.content.decode("utf-8", errors="replace")
            files[f.path] = {
                "content_hash": f.content_hash,
                "language": f.language,
                "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
                "bytes": len(f.content),
            }
            docs += chunk_docs(f, text)
        bm25_base = base / "bm25" if base is not None and old_files else None
        trigram_base = (
            _native.TrigramIndex.open(str(base / "trigram"))
            if base is not None and bm25_base is not None
            else None
        )
        lines_of = None if trigram_base is None else functools.partial(_file_lines, trigram_base)
        chunks = write(building / "bm25", bm25_base, docs, drop, lines_of)
        (building / "trigram").mkdir()
        _native.TrigramIndex.build(
            str(building / "trigram"), [(f.path, f.content) for f in batch.files], trigram_base, sorted(drop)
        )
        (building / FILES_TABLE).write_text(json.dumps(dict(sorted(files.items()))))
        return snapdir.commit(building), len(files), chunks
