"""Text embeddings: the configured model on the configured backend, loaded offline, with a query cache.

`Embedder` loads lazily (or in the background) and never raises on load: a model that cannot be loaded leaves
`unavailable_reason` set, and every encode call raises `ModelUnavailable` with that reason. The same class runs
both tiers of the leg (vector/tiers.py): a transformer (onnx, onnx-int8, torch) or a static model (model2vec).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

import numpy as np

from codesearch.common.models.cache import ONNX_SUBDIR, first_usable
from codesearch.common.models.encoder import MAX_SEQ_TOKENS, OnnxEncoder
from codesearch.common.models.lookup import resolve_model_path
from codesearch.common.models.quiet import quiet_libraries
from codesearch.common.models.threads import configure_torch_threads
from codesearch.config import model_cache_dir
from codesearch.vector.static_model import (
    ENCODE_BATCH,
    StaticEncoder,
    load_static_encoder,
    static_model_id,
)

log = logging.getLogger(__name__)

BACKENDS = ("onnx", "torch", "onnx-int8", "model2vec")
STATIC_BACKEND = "model2vec"  # the backend of the static tier
QUERY_CACHE_SIZE = 1024  # repeated queries (paging, retries, the eval loop) skip the ~20 ms model call
DOC_BATCH_SIZE = 32  # long chunks: bigger batches pad more and gain nothing on 2 cores (measured)


class ModelUnavailable(Exception):
    """The embedding model could not be loaded; the message says which model and why."""


class _Backend(Protocol):
    dims: int

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


class _TorchBackend:
    def __init__(self, path: str, threads: int) -> None:
        configure_torch_threads(threads)
        with quiet_libraries(loads_transformers=True):
            from sentence_transformers import SentenceTransformer

            self.model = SentenceTransformer(path, device="cpu", local_files_only=True)
        self.model.max_seq_length = min(self.model.max_seq_length or MAX_SEQ_TOKENS, MAX_SEQ_TOKENS)
        dims = (
            self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension") else None
        )
        dims = dims or self.model.get_sentence_embedding_dimension()
        if dims is None:
            raise ValueError(f"{path}: the model does not say its embedding dimension")
        self.dims = int(dims)

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        import torch

        with torch.inference_mode():
            out = self.model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32)


def model_id_for(model: str, backend: str) -> str:
    """Vectors of different ids never mix. torch and fp32 onnx compute the same vectors (cosine 1.0000,
    measured), so they share the model's id; int8 and static models differ, so their id names the backend
    (a distilled static model also how it was made)."""
    if backend == STATIC_BACKEND:
        return static_model_id(model)
    return model if backend in ("torch", "onnx") else f"{model}#{backend}"


class Embedder:
    """The configured embedding model. Thread-safe; `load()` is idempotent and never raises."""

    def __init__(
        self,
        model: str,
        backend: str = "onnx",
        threads: int = 0,
        cache_dir: Path | None = None,
        model_cache: Path | None = None,
    ) -> None:
        self.model_name = model
        self.backend_name = backend
        self.model_id = model_id_for(model, backend)  # the document vectors' id: index, cache
        # A static model's token table (query maps and deltas are fitted to it); other models: the model_id.
        self.table_id = static_model_id(model) if backend == STATIC_BACKEND else self.model_id
        self.threads = threads
        # The service's data folder, and the machine-wide folder for exported models (shared by every home).
        self.cache_dir = cache_dir or Path.home() / ".codesearch" / "vector"
        self.model_cache = model_cache or model_cache_dir()
        self.dims = 0
        self.unavailable_reason = ""
        self.load_seconds = 0.0
        self._backend: _Backend | None = None
        self._loaded = threading.Event()
        self._load_lock = threading.Lock()
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_lock = threading.Lock()
        self.query_cache_hits = 0

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    def load(self) -> bool:
        """Loads the model once; True when it is usable. Failures are kept in `unavailable_reason`."""
        with self._load_lock:
            if self._loaded.is_set():
                return self._backend is not None
            t0 = time.perf_counter()
            try:
                self._backend = self._make_backend()
                self.dims = self._backend.dims
                log.info(
                    "embedding model %s (%s) loaded: %d dims in %.1fs",
                    self.model_name,
                    self.backend_name,
                    self.dims,
                    time.perf_counter() - t0,
                )
            except Exception as e:  # any failure: the service stays up and says why
                self.unavailable_reason = self._describe_failure(e)
                log.error("%s", self.unavailable_reason)
            self.load_seconds = time.perf_counter() - t0
            self._loaded.set()
            return self._backend is not None

    def _make_backend(self) -> _Backend:
        if self.backend_name not in BACKENDS:
            raise ModelUnavailable(
                f"unknown embedding backend {self.backend_name!r}; use one of {', '.join(BACKENDS)}"
            )
        if self.backend_name == STATIC_BACKEND:
            return first_usable(
                [self.model_cache, self.cache_dir],
                lambda c: load_static_encoder(self.model_name, c),
            )
        path, _ = resolve_model_path(self.model_name)
        if self.backend_name in ("onnx", "onnx-int8"):
            quantize = self.backend_name == "onnx-int8"
            return first_usable(
                [self.model_cache / ONNX_SUBDIR, self.cache_dir / ONNX_SUBDIR],
                lambda c: OnnxEncoder(path, self.threads, c, quantize),
            )
        return _TorchBackend(path, self.threads)

    def _describe_failure(self, e: Exception) -> str:
        _, looked = resolve_model_path(self.model_name)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return (
            f"embedding model {self.model_name!r} ({self.backend_name}) cannot be loaded: {first[:300]}; "
            f"looked in: {'; '.join(looked)}"
        )

    def wait_loaded(self, timeout: float | None = None) -> bool:
        return self._loaded.wait(timeout)

    def _require(self) -> _Backend:
        if not self._loaded.is_set():
            self.load()
        if self._backend is None:
            raise ModelUnavailable(self.unavailable_reason)
        return self._backend

    def static_encoder(self) -> StaticEncoder:
        """A static model's encoder (its token table)."""
        backend = self._require()
        if not isinstance(backend, StaticEncoder):
            raise ValueError(f"{self.model_name!r} ({self.backend_name}) is not a static model")
        return backend

    def static_table(self) -> np.ndarray:
        """A static model's token table, as its encoder averages it (vector/query_map.py aligns to it)."""
        return self.static_encoder().vectors

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one row per text (float32)."""
        backend = self._require()
        if not texts:
            return np.zeros((0, self.dims), np.float32)
        if isinstance(backend, StaticEncoder):
            return backend.encode(texts, ENCODE_BATCH)
        return backend.encode(texts, DOC_BATCH_SIZE)

    def encode_query(self, text: str) -> np.ndarray:
        """A unit vector for a query, from a small LRU cache when repeated."""
        backend = self._require()
        with self._query_lock:
            hit = self._query_cache.get(text)
            if hit is not None:
                self._query_cache.move_to_end(text)
                self.query_cache_hits += 1
                return hit
        vec = backend.encode([text], 1)[0]
        vec.setflags(write=False)
        with self._query_lock:
            self._query_cache[text] = vec
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vec
