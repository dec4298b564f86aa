"""One repository's vector index: a chunk table and a usearch index in a SnapshotDir generation.

Generation folder:
    chunks.sqlite                 chunks(key -> path, lines, language, hashes, symbol, breadcrumb, snippet, doc text)
                                  and meta (index_version, next_key, files)
    vectors-<model digest>.usearch  vectors of the chunks embedded so far, usearch key = chunk key

The chunk table is committed atomically with each update (SnapshotDir). Vectors fill in afterwards: the
background embedder adds them to the in-memory index and saves it into the live generation with an atomic file
replace. A chunk is pending while its key is not in the index, so a restart resumes exactly where it stopped
(and finds most of the lost work in the embedding cache). The index file name carries a digest of the model id:
a file of another model at open means the model changed, and it is dropped and every chunk re-embedded.
Keys are never reused within a repository; an unchanged chunk keeps its key (and vector) across updates.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from usearch.index import Index, MetricKind

from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.common.sqlite_batches import in_batches
from codesearch.v1 import common_pb2
from codesearch.vector.doc_text import DEFAULT_VARIANT, doc_text
from codesearch.vector.embedder import EmbeddingCache, text_hash

log = logging.getLogger(__name__)

CHUNKS_DB = "chunks.sqlite"
SNIPPET_LINES = 6  # enough to show the signature and docstring summary of a hit
FALLBACK_WINDOW_LINES = 40  # a file sent without chunks is cut into windows the model can read most of
INDEX_DTYPE = "f32"  # exact scores; f16/i8 are smaller but not yet shown to keep recall (bench.py)
# Measured with 300 real queries (bench/vector_recall.py). On the stdlib's 19,016 real chunk embeddings:
# M=16/ef=64 recall@10 0.952 (0.61 ms), M=16/ef=128 0.978 (0.80 ms), M=32/ef=128 0.981 (1.32 ms),
# M=32/ef=256 0.990 (2.68 ms); exact numpy 4.0 ms. Grown to 100,000 (real + synthetic neighbours, --grow-to), build
# beam 128: M=32/ef=128 0.962 (1.42 ms), M=32/ef=256 0.981 (2.54 ms); build beam 256: M=32/ef=96 0.972 (1.28 ms),
# ef=128 0.980 (1.80 ms, recall@50 0.971), ef=256 0.989 (3.1 ms); exact numpy 12-16 ms. HNSW only answers above
# EXACT_SEARCH_MAX; the wider build beam (145 s instead of ~60 s for 100k on 2 cores) buys recall 0.98 under 2 ms.
HNSW_CONNECTIVITY = 32
HNSW_EXPANSION_ADD = 256
HNSW_EXPANSION_SEARCH = 128
# Up to this many vectors an exact scan answers (4.0 ms at 19k, measured above) and never misses; above it, HNSW.
EXACT_SEARCH_MAX = 20_000
FILTER_OVERSAMPLE = 8  # with a language filter, over-fetch from HNSW this many times before filtering


@dataclass(frozen=True)
class ChunkMeta:
    path: str
    start_line: int
    end_line: int
    language: str
    content_hash: str
    symbol: str
    breadcrumb: tuple[str, ...]
    snippet: str
    doc_hash: str


@dataclass(frozen=True)
class Found:
    key: int
    score: float
    meta: ChunkMeta


def vectors_file_name(model_id: str) -> str:
    return f"vectors-{hashlib.sha256(model_id.encode()).hexdigest()[:16]}.usearch"


def new_index(dims: int) -> Index:
    return Index(
        ndim=dims,
        metric=MetricKind.Cos,
        dtype=INDEX_DTYPE,
        connectivity=HNSW_CONNECTIVITY,
        expansion_add=HNSW_EXPANSION_ADD,
        expansion_search=HNSW_EXPANSION_SEARCH,
    )


def _snippet(text: str) -> str:
    return "\n".join(text.splitlines()[:SNIPPET_LINES])


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file per generation
    return db


_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
  key INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER, end_line INTEGER, language TEXT,
  content_hash TEXT, symbol TEXT, breadcrumb TEXT, snippet TEXT, doc_hash TEXT, doc_text TEXT);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""


class RepoIndex:
    """A repository's chunks and vectors. Thread-safe; every method may block (call from a worker thread)."""

    def __init__(
        self, root: Path, repository: str, model_id: str, doc_variant: str = DEFAULT_VARIANT
    ) -> None:
        self.repository = repository
        self.model_id = model_id
        self.doc_variant = doc_variant
        self.snap = SnapshotDir(root)
        self.lock = threading.RLock()
        self.gen: Path | None = None
        self.rows: dict[int, ChunkMeta] = {}
        self.pending: set[int] = set()
        self.files = 0
        self.index_version = 0
        self.next_key = 1
        self.index: Index | None = None
        self._index_is_view = False
        self.dirty = False
        self.model_changed_from = ""
        self._open()

    # ----- opening -----
    def _open(self) -> None:
        gen = self.snap.current()
        if gen is None:
            return
        db = _connect(gen / CHUNKS_DB)
        try:
            meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
            db.row_factory = sqlite3.Row  # columns by name below
            rows = db.execute(
                "SELECT key, path, start_line, end_line, language, content_hash, symbol, breadcrumb, snippet,"
                " doc_hash FROM chunks"
            ).fetchall()
        finally:
            db.close()
        self.gen = gen
        self.index_version = int(meta.get("index_version", 0))
        self.next_key = int(meta.get("next_key", 1))
        self.files = int(meta.get("files", 0))
        self.rows = {
            r["key"]: ChunkMeta(
                path=r["path"],
                start_line=r["start_line"],
                end_line=r["end_line"],
                language=r["language"] or "",
                content_hash=r["content_hash"] or "",
                symbol=r["symbol"] or "",
                breadcrumb=tuple(json.loads(r["breadcrumb"] or "[]")),
                snippet=r["snippet"] or "",
                doc_hash=r["doc_hash"],
            )
            for r in rows
        }
        mine = gen / vectors_file_name(self.model_id)
        others = [p for p in gen.glob("vectors-*.usearch") if p.name != mine.name]
        if others and not mine.exists():
            self.model_changed_from = others[0].name
            log.warning(
                "vector index of %s was built with another embedding model (%s); model is now %r: "
                "dropping %d old vector files and re-embedding %d chunks",
                self.repository,
                others[0].name,
                self.model_id,
                len(others),
                len(self.rows),
            )
        for p in others:
            p.unlink(missing_ok=True)
        if mine.exists():
            self.index = Index.restore(str(mine), view=True)
            # A saved index does not keep its search beam: a restored one searches at usearch's default (64),
            # which at 100k vectors is recall@10 0.907 instead of 0.981 (bench/vector_recall.py).
            self.index.expansion_search = HNSW_EXPANSION_SEARCH  # type: ignore[misc,union-attr]  # usearch stub: no setter
            self._index_is_view = True
        self.pending = self._missing(self.index, self.rows)

    @staticmethod
    def _missing(index: Index | None, rows: dict[int, ChunkMeta]) -> set[int]:
        if not rows:
            return set()
        keys = np.fromiter(rows.keys(), dtype=np.uint64, count=len(rows))
        if index is None or len(index) == 0:
            return {int(k) for k in keys}
        present = np.asarray(index.contains(keys), dtype=bool)
        return {int(k) for k in keys[~present]}

    @property
    def exists(self) -> bool:
        return self.gen is not None

    @property
    def embedded(self) -> int:
        return len(self.rows) - len(self.pending)

    # ----- updates -----
    def apply(self, batch: IndexBatch, cache: EmbeddingCache) -> tuple[int, int]:
        """Commits one update; vectors found in the cache go in at once. Returns (files_deleted, pending)."""
        with self.lock:
            old = self.rows
            touched = {f.path for f in batch.files} | set(batch.deleted_paths)
            if batch.replace_all:
                keep: dict[int, ChunkMeta] = {}
                reusable = old
            else:
                keep = {k: m for k, m in old.items() if m.path not in touched}
                reusable = {k: m for k, m in old.items() if m.path in touched}
            by_ident = {(m.path, m.start_line, m.end_line, m.doc_hash): k for k, m in reusable.items()}
            rows = dict(keep)
            texts: dict[int, str] = {}
            next_key = self.next_key
            for f in batch.files:
                for path, start, end, lang, chash, text, crumbs, symbol in _file_chunks(f):
                    dt = doc_text(path, text, crumbs, symbol, self.doc_variant)
                    dh = text_hash(dt)
                    key = by_ident.pop((path, start, end, dh), None)
                    if key is None:
                        key, next_key = next_key, next_key + 1
                        texts[key] = dt
                    rows[key] = ChunkMeta(
                        path, start, end, lang, chash, symbol, tuple(crumbs), _snippet(text), dh
                    )
            removed = [k for k in old if k not in rows]
            old_paths = {m.path for m in old.values()}
            new_paths = {m.path for m in rows.values()} | {f.path for f in batch.files}
            files_deleted = (
                len(old_paths - new_paths) if batch.replace_all else len(set(batch.deleted_paths) & old_paths)
            )

            with self.snap.building() as building:
                db_path = building / CHUNKS_DB
                if self.gen is not None:
                    shutil.copyfile(self.gen / CHUNKS_DB, db_path)
                db = _connect(db_path)
                try:
                    db.executescript(_SCHEMA)
                    db.execute("BEGIN")
                    db.executemany("DELETE FROM chunks WHERE key = ?", [(k,) for k in removed])
                    db.executemany(
                        "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        [
                            (
                                k,
                                m.path,
                                m.start_line,
                                m.end_line,
                                m.language,
                                m.content_hash,
                                m.symbol,
                                json.dumps(list(m.breadcrumb)),
                                m.snippet,
                                m.doc_hash,
                                texts[k],
                            )
                            for k, m in ((k, rows[k]) for k in texts)
                        ],
                    )
                    meta = {
                        "index_version": batch.index_version,
                        "next_key": next_key,
                        "files": len(new_paths),
                    }
                    db.executemany(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(n, str(v)) for n, v in meta.items()]
                    )
                    db.execute("COMMIT")
                finally:
                    db.close()
                cached = cache.get_many(self.model_id, [rows[k].doc_hash for k in texts])
                index = self.index.copy() if self.index is not None else None
                if index is not None and removed:
                    present = [k for k in removed if k in index]
                    if present:
                        index.remove(np.asarray(present, dtype=np.uint64))
                hit_keys = [k for k in texts if rows[k].doc_hash in cached]
                if hit_keys:
                    vecs = np.stack([cached[rows[k].doc_hash] for k in hit_keys])
                    if index is None:
                        index = new_index(vecs.shape[1])
                    index.add(np.asarray(hit_keys, dtype=np.uint64), vecs)
                if index is not None:
                    index.save(str(building / vectors_file_name(self.model_id)))
                gen = self.snap.commit(building)
            self.gen = gen
            self.rows = rows
            self.index = index
            self._index_is_view = False
            self.dirty = False
            self.files = len(new_paths)
            self.index_version = batch.index_version
            self.next_key = next_key
            self.pending = self._missing(index, rows)
            return files_deleted, len(self.pending)

    # ----- progressive embedding -----
    def pending_texts(self, limit: int) -> list[tuple[int, str, str]]:
        """Up to `limit` pending chunks as (key, doc hash, doc text), in key order (file order of the update)."""
        with self.lock:
            if not self.pending or self.gen is None:
                return []
            keys = sorted(self.pending)[:limit]
            db = _connect(self.gen / CHUNKS_DB)
        try:
            out: list[tuple[int, str, str]] = []
            for part, marks in in_batches(keys):
                out += db.execute(
                    f"SELECT key, doc_hash, doc_text FROM chunks WHERE key IN ({marks})", part
                ).fetchall()
            return sorted(out)
        finally:
            db.close()

    def add_vectors(self, keys: list[int], vectors: np.ndarray) -> int:
        """Adds vectors of chunks still pending (an update may have removed some meanwhile). Returns how many."""
        with self.lock:
            if self.index is not None and self.index.ndim != vectors.shape[1]:
                log.warning(
                    "vector index of %s has %d dims but model %r gives %d: dropping it and re-embedding %d chunks",
                    self.repository,
                    self.index.ndim,
                    self.model_id,
                    vectors.shape[1],
                    len(self.rows),
                )
                self.index, self._index_is_view = None, False
                self.pending = set(self.rows)
            pairs = [(k, i) for i, k in enumerate(keys) if k in self.pending]
            if not pairs:
                return 0
            if self.index is None:
                self.index = new_index(vectors.shape[1])
            elif self._index_is_view:
                self.index = self.index.copy()
                self._index_is_view = False
            self.index.add(np.asarray([k for k, _ in pairs], dtype=np.uint64), vectors[[i for _, i in pairs]])
            self.pending.difference_update(k for k, _ in pairs)
            self.dirty = True
            return len(pairs)

    def save(self) -> None:
        """Writes the in-memory index into the live generation (atomic replace), when it changed."""
        with self.lock:
            if not self.dirty or self.index is None or self.gen is None:
                return
            final = self.gen / vectors_file_name(self.model_id)
            tmp = final.with_suffix(".usearch.tmp")
            self.index.save(str(tmp))
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, final)
            self.dirty = False

    # ----- search -----
    def search(self, query: np.ndarray, count: int, languages: set[str] | None = None) -> list[Found]:
        with self.lock:
            index = self.index
            if index is None or len(index) == 0 or index.ndim != len(query):
                return []
            if languages:
                allowed = [
                    k for k, m in self.rows.items() if m.language in languages and k not in self.pending
                ]
                if not allowed:
                    return []
                if len(allowed) <= EXACT_SEARCH_MAX:
                    keys = np.asarray(allowed, dtype=np.uint64)
                    vecs = np.asarray(index.get(keys, dtype=np.float32), dtype=np.float32).reshape(  # type: ignore[arg-type]  # usearch takes numpy dtypes
                        len(keys), -1
                    )
                    scores = vecs @ query.astype(np.float32)
                    top = np.argsort(-scores)[:count]
                    return [Found(int(keys[i]), float(scores[i]), self.rows[int(keys[i])]) for i in top]
                fetch = min(len(index), count * FILTER_OVERSAMPLE)
                matches = index.search(query, fetch)
                out = [
                    Found(int(k), 1.0 - float(d), self.rows[int(k)])
                    for k, d in zip(matches.keys, matches.distances, strict=True)
                    if int(k) in self.rows and self.rows[int(k)].language in languages
                ]
                return out[:count]
            matches = index.search(query, min(count, len(index)), exact=len(index) <= EXACT_SEARCH_MAX)
            return [
                Found(int(k), 1.0 - float(d), self.rows[int(k)])
                for k, d in zip(matches.keys, matches.distances, strict=True)
                if int(k) in self.rows
            ]

    def disk_bytes(self) -> int:
        gen = self.gen
        if gen is None:
            return 0
        return sum(p.stat().st_size for p in gen.iterdir() if p.is_file())

    def delete(self) -> bool:
        with self.lock:
            self.rows, self.pending, self.index, self.gen = {}, set(), None, None
            return self.snap.delete()


def _file_chunks(f: common_pb2.IndexedFile) -> list[tuple[str, int, int, str, str, str, list[str], str]]:
    """(path, start, end, language, content hash, text, breadcrumb, symbol) of a file's chunks.

    A file sent without chunks is cut into fixed windows so it is still searchable.
    """
    out = []
    for c in f.chunks:
        out.append(
            (
                c.path or f.path,
                c.start_line,
                c.end_line,
                c.language or f.language,
                c.content_hash or text_hash(c.text),
                c.text,
                list(c.breadcrumb),
                c.symbol,
            )
        )
    if out or not f.content:
        return out
    lines = f.content.decode("utf-8", "replace").splitlines()
    for i in range(0, len(lines), FALLBACK_WINDOW_LINES):
        text = "\n".join(lines[i : i + FALLBACK_WINDOW_LINES])
        if text.strip():
            end = min(len(lines), i + FALLBACK_WINDOW_LINES)
            out.append((f.path, i + 1, end, f.language, text_hash(text), text, [], ""))
    return out
