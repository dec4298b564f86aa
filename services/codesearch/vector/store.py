"""One repository's vector index: a chunk table and a usearch index per tier in a SnapshotDir generation.

Generation folder:
    chunks.sqlite                 chunks(key -> path, lines, language, hashes, symbol, breadcrumb, snippet, doc text)
                                  and meta (index_version, next_key, files)
    vectors-<model digest>.usearch  one per tier (vector/tiers.py): its vectors so far, usearch key = chunk key

The chunk table is committed atomically with each update (SnapshotDir), together with the vectors of every tier
embedded inside the update (the static tier: all of them). The other tiers fill in afterwards: the background
embedder adds to the in-memory index and saves it into the live generation with an atomic file replace. A chunk
is pending in a tier while its key is not in that tier's index, so a restart resumes exactly where it stopped
(and finds most of the lost work in the embedding cache). The index file name carries a digest of the model id:
a file of no configured model at open means a model changed, and it is dropped and its chunks re-embedded.
Keys are never reused within a repository; an unchanged chunk keeps its key (and vectors) across updates.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.vector.doc_text import DEFAULT_VARIANT, doc_text
from codesearch.vector.embedding_cache import SQLITE_MAX_PARAMS, EmbeddingCache, text_hash
from codesearch.vector.tier_index import (
    HNSW_EXPANSION_ADD,
    STATIC_EXPANSION_ADD,
    TierVectors,
    new_index,
    restore_index,
)

log = logging.getLogger(__name__)

CHUNKS_DB = "chunks.sqlite"
EXPANSION_ADD_BY_TIER = {"static": STATIC_EXPANSION_ADD}  # other tiers build in the background at full beam
SNIPPET_LINES = 6  # enough to show the signature and docstring summary of a hit
FALLBACK_WINDOW_LINES = 40  # a file sent without chunks is cut into windows the model can read most of


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


Encode = Callable[[list[str]], np.ndarray]  # doc texts -> unit vectors, one row each


class RepoIndex:
    """A repository's chunks and its vectors per tier. Thread-safe; every method may block (worker threads).

    `lock` guards the live state (rows, tiers, generation) and is held only briefly; `update_lock` serialises
    updates, whose embedding may take seconds while searches go on."""

    def __init__(
        self, root: Path, repository: str, model_ids: Mapping[str, str], doc_variant: str = DEFAULT_VARIANT
    ) -> None:
        self.repository = repository
        self.doc_variant = doc_variant
        self.snap = SnapshotDir(root)
        self.lock = threading.RLock()
        self.update_lock = threading.Lock()
        self.gen: Path | None = None
        self.rows: dict[int, ChunkMeta] = {}
        self.tiers = {
            tier: TierVectors(
                tier, model_id, expansion_add=EXPANSION_ADD_BY_TIER.get(tier, HNSW_EXPANSION_ADD)
            )
            for tier, model_id in model_ids.items()
        }
        self.files = 0
        self.index_version = 0
        self.next_key = 1
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
            r[0]: ChunkMeta(
                r[1],
                r[2],
                r[3],
                r[4] or "",
                r[5] or "",
                r[6] or "",
                tuple(json.loads(r[7] or "[]")),
                r[8] or "",
                r[9],
            )
            for r in rows
        }
        mine = {t.file_name for t in self.tiers.values()}
        others = [p for p in gen.glob("vectors-*.usearch") if p.name not in mine]
        if others:
            self.model_changed_from = others[0].name
            log.warning(
                "vector index of %s holds vectors of a model no longer configured (%s): dropping %d files",
                self.repository,
                others[0].name,
                len(others),
            )
        for p in others:
            p.unlink(missing_ok=True)
        keys = list(self.rows)
        for t in self.tiers.values():
            if (gen / t.file_name).exists():
                t.index, t.is_view = restore_index(gen / t.file_name), True
            t.pending = t.missing(keys)

    @property
    def exists(self) -> bool:
        return self.gen is not None

    @property
    def pending(self) -> int:
        """Chunks some tier still has to embed (background work left)."""
        with self.lock:
            return sum(len(t.pending) for t in self.tiers.values())

    def progress(self) -> dict[str, tuple[int, int]]:
        """{tier: (chunks embedded, chunks)}."""
        with self.lock:
            total = len(self.rows)
            return {name: (total - len(t.pending), total) for name, t in self.tiers.items()}

    # ----- updates -----
    def apply(
        self, batch: IndexBatch, cache: EmbeddingCache, embed_now: Mapping[str, Encode] | None = None
    ) -> tuple[int, int]:
        """Commits one update. Every tier takes its cached vectors at once; the tiers in `embed_now` embed the
        rest inside the update too, so they are complete when it commits. Returns (files_deleted, pending)."""
        with self.update_lock:
            with self.lock:
                old, gen_before, next_key = self.rows, self.gen, self.next_key
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
            building = self.snap.begin()
            try:
                self._write_chunks(building, gen_before, rows, texts, removed, batch.index_version, next_key)
                with self.lock:
                    indexes = {name: t.next_index(removed) for name, t in self.tiers.items()}
                for name, t in self.tiers.items():
                    fill = _vectors_for(texts, rows, cache, t.model_id, (embed_now or {}).get(name))
                    index = indexes[name]
                    if fill:
                        keys = list(fill)
                        if index is None:
                            index = indexes[name] = new_index(len(next(iter(fill.values()))), t.expansion_add)
                        index.add(np.asarray(keys, dtype=np.uint64), np.stack([fill[k] for k in keys]))
                    if index is not None:
                        index.save(str(building / t.file_name))
                gen = self.snap.commit(building)
            except BaseException:
                self.snap.abort(building)
                raise
            with self.lock:
                self.gen, self.rows = gen, rows
                keys = list(rows)
                for name, t in self.tiers.items():
                    t.index, t.is_view, t.dirty = indexes[name], False, False
                    t.pending = t.missing(keys)
                self.files = len(new_paths)
                self.index_version = batch.index_version
                self.next_key = next_key
            return files_deleted, self.pending

    @staticmethod
    def _write_chunks(
        building: Path,
        gen_before: Path | None,
        rows: dict[int, ChunkMeta],
        texts: dict[int, str],
        removed: list[int],
        index_version: int,
        next_key: int,
    ) -> None:
        """The new generation's chunk table: the previous one, less `removed`, plus the chunks in `texts`."""
        db_path = building / CHUNKS_DB
        if gen_before is not None:
            shutil.copyfile(gen_before / CHUNKS_DB, db_path)
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
            files = len({m.path for m in rows.values()})
            meta = {"index_version": index_version, "next_key": next_key, "files": files}
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(n, str(v)) for n, v in meta.items()]
            )
            db.execute("COMMIT")
        finally:
            db.close()

    # ----- progressive embedding -----
    def pending_texts(self, tier: str, limit: int) -> list[tuple[int, str, str]]:
        """Up to `limit` chunks pending in `tier` as (key, doc hash, doc text), in key order (file order)."""
        with self.lock:
            t = self.tiers[tier]
            if not t.pending or self.gen is None:
                return []
            keys = sorted(t.pending)[:limit]
            db = _connect(self.gen / CHUNKS_DB)
        try:
            out: list[tuple[int, str, str]] = []
            for i in range(0, len(keys), SQLITE_MAX_PARAMS):
                part = keys[i : i + SQLITE_MAX_PARAMS]
                marks = ",".join("?" * len(part))
                out += db.execute(
                    f"SELECT key, doc_hash, doc_text FROM chunks WHERE key IN ({marks})", part
                ).fetchall()
            return sorted(out)
        finally:
            db.close()

    def add_vectors(self, tier: str, keys: list[int], vectors: np.ndarray) -> int:
        """Adds vectors of chunks still pending in `tier`. Returns how many were added."""
        with self.lock:
            t = self.tiers[tier]
            added = t.add(keys, vectors)
            if added < 0:  # another model's dimensions: every chunk is pending again
                t.pending = set(self.rows)
                added = t.add(keys, vectors)
            return added

    def save(self) -> None:
        """Writes every changed tier index into the live generation."""
        with self.lock:
            if self.gen is not None:
                for t in self.tiers.values():
                    t.save_into(self.gen)

    # ----- search -----
    def search(
        self, tier: str, query: np.ndarray, count: int, languages: set[str] | None = None
    ) -> list[Found]:
        """The nearest chunks in one tier (the query embedded by that tier's model)."""
        with self.lock:
            rows = self.rows
            found = self.tiers[tier].search(query, count, languages, rows)
            return [Found(k, score, rows[k]) for k, score in found]

    def memory_bytes(self) -> dict[str, int]:
        """{tier: bytes its index takes in memory (vectors and graph)}."""
        with self.lock:
            return {name: t.memory_bytes() for name, t in self.tiers.items()}

    def disk_bytes(self) -> int:
        gen = self.gen
        if gen is None:
            return 0
        return sum(p.stat().st_size for p in gen.iterdir() if p.is_file())

    def delete(self) -> bool:
        with self.update_lock, self.lock:
            self.rows, self.gen = {}, None
            for t in self.tiers.values():
                t.index, t.pending, t.is_view, t.dirty = None, set(), False, False
            return self.snap.delete()


def _vectors_for(
    texts: dict[int, str],
    rows: dict[int, ChunkMeta],
    cache: EmbeddingCache,
    model_id: str,
    encode: Encode | None,
) -> dict[int, np.ndarray]:
    """Vectors of the new chunks `texts` for one model: from the cache, and the rest from `encode` when given
    (then cached too). Texts repeated across chunks are embedded once."""
    if not texts:
        return {}
    cached = cache.get_many(model_id, [rows[k].doc_hash for k in texts])
    if encode is not None:
        todo = {rows[k].doc_hash: t for k, t in texts.items() if rows[k].doc_hash not in cached}
        if todo:
            fresh = list(zip(todo, encode(list(todo.values())), strict=True))
            cache.put_many(model_id, fresh)
            cached.update(fresh)
    return {k: cached[rows[k].doc_hash] for k in texts if rows[k].doc_hash in cached}


def _file_chunks(f: object) -> list[tuple[str, int, int, str, str, str, list[str], str]]:
    """(path, start, end, language, content hash, text, breadcrumb, symbol) of a file's chunks.

    A file sent without chunks is cut into fixed windows so it is still searchable.
    """
    out = []
    for c in f.chunks:  # type: ignore[attr-defined]
        out.append(
            (
                c.path or f.path,  # type: ignore[attr-defined]
                c.start_line,
                c.end_line,
                c.language or f.language,  # type: ignore[attr-defined]
                c.content_hash or text_hash(c.text),
                c.text,
                list(c.breadcrumb),
                c.symbol,
            )
        )
    if out or not f.content:  # type: ignore[attr-defined]
        return out
    lines = f.content.decode("utf-8", "replace").splitlines()  # type: ignore[attr-defined]
    for i in range(0, len(lines), FALLBACK_WINDOW_LINES):
        text = "\n".join(lines[i : i + FALLBACK_WINDOW_LINES])
        if text.strip():
            end = min(len(lines), i + FALLBACK_WINDOW_LINES)
            out.append((f.path, i + 1, end, f.language, text_hash(text), text, [], ""))  # type: ignore[attr-defined]
    return out
