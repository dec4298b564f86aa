"""One repository's vector index: a chunk table and a usearch index per tier in a SnapshotDir generation.

Generation folder:
    chunks.sqlite                   the chunk table (vector/chunk_table.py)
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

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codesearch.common.doc_text import doc_text
from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir, dir_bytes
from codesearch.vector.chunk_table import (
    ChunkMeta,
    read_doc_texts,
    read_table,
    sent_chunks,
    snippet,
    write_table,
)
from codesearch.vector.embedding_cache import EmbeddingCache, text_hash
from codesearch.vector.tier_index import (
    HNSW_EXPANSION_ADD,
    STATIC_EXPANSION_ADD,
    TierVectors,
    new_index,
    restore_index,
)

log = logging.getLogger(__name__)

EXPANSION_ADD_BY_TIER = {"static": STATIC_EXPANSION_ADD}  # other tiers build in the background at full beam


@dataclass(frozen=True)
class Found:
    key: int
    score: float
    meta: ChunkMeta


Encode = Callable[[list[str]], np.ndarray]  # doc texts -> unit vectors, one row each


class RepoIndex:
    """A repository's chunks and its vectors per tier. Thread-safe; every method may block (worker threads).

    `lock` guards the live state (rows, tiers, generation) and is held only briefly; `update_lock` serialises
    updates, whose embedding may take seconds while searches go on."""

    def __init__(self, root: Path, repository: str, model_ids: Mapping[str, str]) -> None:
        self.repository = repository
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
        meta, self.rows = read_table(gen)
        self.gen = gen
        self.index_version, self.next_key, self.files = meta
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
            texts: dict[int, str] = {}  # the chunks new to this update: what the tiers embed
            blocks: list[list[tuple[int, str]]] = []  # every sent file's chunks: its doc-text block
            for f in batch.files:
                block = []
                for c in sent_chunks(f):
                    dt = c.doc_text or doc_text(c.path, c.text, c.breadcrumb, c.symbol)
                    dh = text_hash(dt)
                    key = by_ident.pop((c.path, c.start_line, c.end_line, dh), None)
                    if key is None:
                        key, next_key = next_key, next_key + 1
                        texts[key] = dt
                    block.append((key, dt))
                    rows[key] = ChunkMeta(
                        path=c.path,
                        start_line=c.start_line,
                        end_line=c.end_line,
                        language=c.language,
                        symbol=c.symbol,
                        breadcrumb=tuple(c.breadcrumb),
                        snippet=snippet(c.text),
                        doc_hash=dh,
                    )
                if block:
                    blocks.append(block)
            removed = [k for k in old if k not in rows]
            old_paths = {m.path for m in old.values()}
            new_paths = {m.path for m in rows.values()} | {f.path for f in batch.files}
            files_deleted = (
                len(old_paths - new_paths) if batch.replace_all else len(set(batch.deleted_paths) & old_paths)
            )
            with self.snap.building() as building:
                table_before = None if batch.replace_all else gen_before  # a full update starts a fresh table
                write_table(building, table_before, rows, blocks, removed, batch.index_version, next_key)
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

    # ----- progressive embedding -----
    def pending_texts(self, tier: str, limit: int) -> list[tuple[int, str, str]]:
        """Up to `limit` chunks pending in `tier` as (key, doc hash, doc text), in key order (file order)."""
        with self.lock:
            t = self.tiers[tier]
            if not t.pending or self.gen is None:
                return []
            keys = sorted(t.pending)[:limit]
            gen = self.gen
        return read_doc_texts(gen, keys)

    def doc_texts(self, keys: list[int]) -> dict[int, str]:
        """{key: the text its vectors were made from} of those of `keys` the live generation holds."""
        with self.lock:
            gen = self.gen
        return {} if gen is None else {k: text for k, _, text in read_doc_texts(gen, keys)}

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
        return dir_bytes(self.gen)

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
    found, _encoded = cache.fill(model_id, [(rows[k].doc_hash, t) for k, t in texts.items()], encode)
    return {k: found[rows[k].doc_hash] for k in texts if rows[k].doc_hash in found}
