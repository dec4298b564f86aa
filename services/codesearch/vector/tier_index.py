"""One tier's vectors of one repository: a usearch index keyed by chunk key, and the chunks still without one.

Not thread-safe on its own: RepoIndex (store.py) guards it with the repository's lock.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from codesearch.vector import Index, MetricKind

log = logging.getLogger(__name__)

# Half-precision vectors (issue 45 item 3): 0.61x the index (stdlib static tier 24.5 -> 14.8 MB) with the same
# answers' quality. `codesearch_lab.bench.vector_recall` on the stdlib's 18,823 static vectors, 300 real
# queries, M=32/ef=128: recall@10 f32 0.991, f16 0.991, i8 0.956; recall@50 0.981 / 0.980 / 0.957. Through the
# server, NDCG@10 on the 57 development repositories and the stdlib sets identical in every category (auto and
# semantic); search p50 0.91-0.95x of f32's (codesearch_lab.bench.latency, same run). An index saved as f32
# keeps its type.
INDEX_DTYPE = "f16"
# Measured with 300 real queries (vector/bench_recall.py). On the stdlib's 19,016 real chunk embeddings:
# M=16/ef=64 recall@10 0.952 (0.61 ms), M=16/ef=128 0.978 (0.80 ms), M=32/ef=128 0.981 (1.32 ms),
# M=32/ef=256 0.990 (2.68 ms); exact numpy 4.0 ms. Grown to 100,000 (real + synthetic neighbours, --grow-to), build
# beam 128: M=32/ef=128 0.962 (1.42 ms), M=32/ef=256 0.981 (2.54 ms); build beam 256: M=32/ef=96 0.972 (1.28 ms),
# ef=128 0.980 (1.80 ms, recall@50 0.971), ef=256 0.989 (3.1 ms); exact numpy 12-16 ms. HNSW only answers above
# EXACT_SEARCH_MAX; the wider build beam (145 s instead of ~60 s for 100k on 2 cores) buys recall 0.98 under 2 ms.
HNSW_CONNECTIVITY = 32
HNSW_EXPANSION_ADD = 256
# The static tier's graph is built inside the update the user waits for. Its 21,721 stdlib vectors (256 dims, 300
# noisy self-queries, hnsw_ef.py in the #16 note): build beam 256 recall@10 0.995, 64 0.988 at a quarter of the
# build time, 32 0.977.
STATIC_EXPANSION_ADD = 64
HNSW_EXPANSION_SEARCH = 128
# Up to this many vectors an exact scan answers (4.0 ms at 19k, measured above) and never misses; above it, HNSW.
EXACT_SEARCH_MAX = 20_000
FILTER_OVERSAMPLE = 8  # with a language filter, over-fetch from HNSW this many times before filtering


class _Chunk(Protocol):
    @property
    def language(self) -> str: ...


def vectors_file_name(model_id: str) -> str:
    return f"vectors-{hashlib.sha256(model_id.encode()).hexdigest()[:16]}.usearch"


def new_index(dims: int, expansion_add: int = HNSW_EXPANSION_ADD) -> Index:
    return Index(
        ndim=dims,
        metric=MetricKind.Cos,
        dtype=INDEX_DTYPE,
        connectivity=HNSW_CONNECTIVITY,
        expansion_add=expansion_add,
        expansion_search=HNSW_EXPANSION_SEARCH,
    )


def restore_index(path: Path) -> Index:
    """A saved index, memory-mapped read-only."""
    index = Index.restore(str(path), view=True)
    if index is None:
        raise ValueError(f"{path} is not a usearch index")
    # A saved index does not keep its search beam: a restored one searches at usearch's default (64), which at
    # 100k vectors is recall@10 0.907 instead of 0.981 (bench_recall.py).
    index.expansion_search = HNSW_EXPANSION_SEARCH  # type: ignore[misc]  # usearch stub: no setter
    return index


@dataclass
class TierVectors:
    """A tier's index (None until its first vector) and the chunk keys it has no vector for yet."""

    tier: str
    model_id: str
    index: Index | None = None
    pending: set[int] = field(default_factory=set)
    is_view: bool = False  # a read-only memory map: copy before adding
    expansion_add: int = HNSW_EXPANSION_ADD  # graph build beam of a new index
    dirty: bool = False  # added to since the last save

    @property
    def file_name(self) -> str:
        return vectors_file_name(self.model_id)

    def missing(self, keys: list[int]) -> set[int]:
        """Which of `keys` have no vector in the index."""
        if not keys:
            return set()
        arr = np.asarray(keys, dtype=np.uint64)
        if self.index is None or len(self.index) == 0:
            return set(keys)
        present = np.asarray(self.index.contains(arr), dtype=bool)
        return {int(k) for k in arr[~present]}

    def next_index(self, removed: list[int]) -> Index | None:
        """A copy of the index without `removed`, for the next generation (the live one keeps serving)."""
        if self.index is None:
            return None
        index = self.index.copy()
        present = [k for k in removed if k in index]
        if present:
            index.remove(np.asarray(present, dtype=np.uint64))
        return index

    def add(self, keys: list[int], vectors: np.ndarray) -> int:
        """Adds vectors of chunks still pending (an update may have removed some meanwhile). Returns how many."""
        if self.index is not None and self.index.ndim != vectors.shape[1]:
            log.warning(
                "%s vectors have %d dims but model %r gives %d: dropping them and embedding again",
                self.tier,
                self.index.ndim,
                self.model_id,
                vectors.shape[1],
            )
            self.index, self.is_view = None, False
            return -1  # the caller marks every chunk pending again
        pairs = [(k, i) for i, k in enumerate(keys) if k in self.pending]
        if not pairs:
            return 0
        if self.index is None:
            self.index = new_index(vectors.shape[1], self.expansion_add)
        elif self.is_view:
            self.index, self.is_view = self.index.copy(), False
        self.index.add(np.asarray([k for k, _ in pairs], dtype=np.uint64), vectors[[i for _, i in pairs]])
        self.pending.difference_update(k for k, _ in pairs)
        self.dirty = True
        return len(pairs)

    def save_into(self, gen: Path) -> None:
        """Writes the index into a live generation (atomic replace), when it changed."""
        if not self.dirty or self.index is None:
            return
        final = gen / self.file_name
        tmp = final.with_suffix(".usearch.tmp")
        self.index.save(str(tmp))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        self.dirty = False

    def memory_bytes(self) -> int:
        return int(self.index.memory_usage) if self.index is not None else 0

    def search(
        self, query: np.ndarray, count: int, languages: set[str] | None, rows: Mapping[int, _Chunk]
    ) -> list[tuple[int, float]]:
        """(chunk key, cosine) best first, over the live chunks `rows`."""
        index = self.index
        if index is None or len(index) == 0 or index.ndim != len(query):
            return []
        if languages:
            allowed = [k for k, m in rows.items() if m.language in languages and k not in self.pending]
            if not allowed:
                return []
            if len(allowed) <= EXACT_SEARCH_MAX:
                keys = np.asarray(allowed, dtype=np.uint64)
                stored = index.get(keys, dtype=np.float32)  # type: ignore[arg-type]  # usearch stub: DTypeLike omits numpy types
                vecs = np.asarray(stored, dtype=np.float32).reshape(len(keys), -1)
                scores = vecs @ query.astype(np.float32)
                top = np.argsort(-scores)[:count]
                return [(int(keys[i]), float(scores[i])) for i in top]
            matches = index.search(query, min(len(index), count * FILTER_OVERSAMPLE))
            found = [
                (int(k), 1.0 - float(d))
                for k, d in zip(matches.keys, matches.distances, strict=True)
                if int(k) in rows and rows[int(k)].language in languages
            ]
            return found[:count]
        matches = index.search(query, min(count, len(index)), exact=len(index) <= EXACT_SEARCH_MAX)
        return [
            (int(k), 1.0 - float(d))
            for k, d in zip(matches.keys, matches.distances, strict=True)
            if int(k) in rows
        ]
