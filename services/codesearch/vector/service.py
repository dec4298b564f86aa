"""VectorService: dense retrieval over chunk embeddings, one usearch index per repository.

Updates commit the chunk table at once and return how many chunks still need a vector; a background thread
embeds them in batches (embedding cache first) and saves the index as it goes, so searches answer over what is
embedded so far (partial=true) and a restart resumes the remaining work.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import numpy as np

from codesearch.common.errors import (
    ServiceError,
    check_query,
    check_repo_name,
    invalid,
    not_found,
    unavailable,
)
from codesearch.common.filters import OVERSAMPLE, file_filter
from codesearch.common.grpc_util import rpc
from codesearch.common.index_update import IndexBatch, WriteLocks, apply_update_stream, update_result
from codesearch.common.lifecycle import on_shutdown
from codesearch.common.snapshot import list_repositories
from codesearch.config import MAX_QUERY_CHARS, Settings
from codesearch.v1 import common_pb2, vector_pb2, vector_pb2_grpc
from codesearch.vector.doc_text import DEFAULT_VARIANT
from codesearch.vector.embedder import Embedder, EmbeddingCache, ModelUnavailable
from codesearch.vector.store import RepoIndex

log = logging.getLogger(__name__)

SERVICE = "vector"
MAX_SEARCH_LIMIT = 1000  # the API's documented bound; the orchestrator asks for far fewer
MAX_EMBED_TEXTS = 256  # per Embed call, as documented in vector.proto
MAX_EMBED_TEXT_CHARS = 100_000  # the model reads ~1,000 characters; more is a mistake, not a document
QUERY_YIELD_BATCH = 8  # documents per model call in the background: a query waits for at most one of these
QUERY_YIELD_POLL_S = 0.005  # how often the background worker checks whether queries are done
QUERY_YIELD_MAX_S = 5.0  # a stream of queries may not starve indexing for longer than this per sub-batch
EMBED_BATCH = 64  # chunks per background step: big enough to batch well, small enough to save progress often
SAVE_INTERVAL_S = (
    5.0  # how often partial progress reaches disk; a crash loses at most this much (it is cached)
)
IDLE_WAIT_S = 1.0  # the worker re-checks for work at least this often even without a wake-up
WAIT_IDLE_POLL_S = 0.05  # wait_idle() polling period

_EMBEDDERS: dict[tuple[str, str, int], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def shared_embedder(settings: Settings) -> Embedder:
    """One loaded model per configuration per process (servers in tests and in one binary share it)."""
    key = (settings.embed_model, settings.embed_backend, settings.torch_threads)
    with _EMBEDDERS_LOCK:
        emb = _EMBEDDERS.get(key)
        if emb is None:
            emb = Embedder(*key, cache_dir=settings.service_dir(SERVICE), model_cache=settings.model_cache)
            _EMBEDDERS[key] = emb
        return emb


class VectorServicer(vector_pb2_grpc.VectorServiceServicer):
    def __init__(
        self, settings: Settings, doc_variant: str = DEFAULT_VARIANT, start_worker: bool = True
    ) -> None:
        self.settings = settings
        self.dir: Path = settings.service_dir(SERVICE)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.embedder = shared_embedder(settings)
        self.cache = EmbeddingCache(self.dir / "embeddings.sqlite")
        self.doc_variant = doc_variant
        self._repos: dict[str, RepoIndex] = {}
        self._repos_lock = threading.Lock()
        self._wake = threading.Event()
        self._write_locks = WriteLocks()
        self._stop = threading.Event()
        self._queries_lock = threading.Lock()
        self._queries_in_flight = 0
        self.embedded_by_model = 0  # chunks the worker sent through the model (cache misses)
        self._worker = threading.Thread(target=self._run, name="vector-embedder", daemon=True)
        if start_worker:
            self.start()

    def start(self) -> None:
        """Starts the background thread: load the model, open repositories on disk, embed pending chunks."""
        if not self._worker.is_alive():
            self._worker.start()

    # ----- repositories -----
    def _root(self, name: str) -> Path:
        return self.dir / name

    def repo(self, name: str, create: bool = False) -> RepoIndex:
        with self._repos_lock:
            r = self._repos.get(name)
            if r is None:
                r = RepoIndex(self._root(name), name, self.embedder.model_id, self.doc_variant)
                if not r.exists and not create:
                    raise not_found(f"repository {name!r} has no vector index")
                self._repos[name] = r
            return r

    def known_repositories(self) -> list[str]:
        with self._repos_lock:
            open_ = {n for n, r in self._repos.items() if r.exists}
        return sorted(open_ | set(list_repositories(self.dir)))

    def _select(self, names: list[str]) -> list[RepoIndex]:
        if not names:
            return [self.repo(n) for n in self.known_repositories()]
        return [self.repo(check_repo_name(n)) for n in dict.fromkeys(names)]

    # ----- background embedding -----
    def _run(self) -> None:
        self.embedder.load()
        for name in list_repositories(self.dir):
            try:
                self.repo(name)
            except Exception:
                log.exception("cannot open vector index of %s", name)
        last_save = time.monotonic()
        while not self._stop.is_set():
            worked = False
            if self.embedder.unavailable_reason == "":
                with self._repos_lock:
                    repos = [r for r in self._repos.values() if r.pending]
                for r in repos:
                    try:
                        worked |= self._embed_step(r)
                        if not r.pending or time.monotonic() - last_save > SAVE_INTERVAL_S:
                            r.save()
                            last_save = time.monotonic()
                    except Exception:
                        log.exception("embedding pending chunks of %s failed", r.repository)
            if not worked:
                self._wake.wait(IDLE_WAIT_S)
                self._wake.clear()

    def _embed_step(self, r: RepoIndex) -> bool:
        todo = r.pending_texts(EMBED_BATCH)
        if not todo:
            return False
        keys = [k for k, _, _ in todo]
        hashes = [h for _, h, _ in todo]
        cached = self.cache.get_many(self.embedder.model_id, hashes)
        miss = [(h, t) for _, h, t in todo if h not in cached]
        if miss:
            uniq = dict(miss)
            texts = list(uniq.values())
            parts = []
            for i in range(0, len(texts), QUERY_YIELD_BATCH):
                self._yield_to_queries()
                parts.append(self.embedder.encode_documents(texts[i : i + QUERY_YIELD_BATCH]))
            vecs = np.concatenate(parts)
            fresh = list(zip(uniq.keys(), vecs, strict=True))
            self.cache.put_many(self.embedder.model_id, fresh)
            cached.update(fresh)
            self.embedded_by_model += len(uniq)
        r.add_vectors(keys, np.stack([cached[h] for h in hashes]))
        return True

    def _encode_query_first(self, emb: Embedder, text: str) -> np.ndarray:
        """Embeds a query while the background worker waits: on 2 cores two torch calls at once make the
        query wait for a whole document batch (measured 4.7 s instead of ~20 ms)."""
        with self._queries_lock:
            self._queries_in_flight += 1
        try:
            return emb.encode_query(text)
        finally:
            with self._queries_lock:
                self._queries_in_flight -= 1

    def _yield_to_queries(self) -> None:
        waited = 0.0
        while self._queries_in_flight and waited < QUERY_YIELD_MAX_S and not self._stop.is_set():
            time.sleep(QUERY_YIELD_POLL_S)
            waited += QUERY_YIELD_POLL_S

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._worker.is_alive():
            self._worker.join(timeout=60)
        with self._repos_lock:
            repos = list(self._repos.values())
        for r in repos:
            r.save()
        self.cache.close()

    async def wait_idle(self, repository: str | None = None, timeout: float = 300.0) -> bool:
        """True once the repository (or every open one) has no pending chunk; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if repository is not None:
                repos = [self.repo(repository)]
            else:
                with self._repos_lock:
                    repos = list(self._repos.values())
            if all(not r.pending for r in repos):
                return True
            if self.embedder.unavailable_reason:
                return False
            await asyncio.sleep(WAIT_IDLE_POLL_S)
        return False

    async def _model(self) -> Embedder:
        if not self.embedder.loaded:
            await asyncio.to_thread(self.embedder.load)
        if self.embedder.unavailable_reason:
            raise unavailable(self.embedder.unavailable_reason)
        return self.embedder

    # ----- RPCs -----
    @rpc
    async def UpdateVectorIndex(
        self,
        request_iterator: AsyncIterator[vector_pb2.UpdateVectorIndexRequest],
        context: grpc.aio.ServicerContext,
    ) -> vector_pb2.UpdateVectorIndexResponse:
        def apply(batch: IndexBatch) -> tuple[RepoIndex, int, int]:
            r = self.repo(batch.repository, create=True)
            return (r, *r.apply(batch, self.cache))

        batch, (r, deleted, pending) = await apply_update_stream(request_iterator, self._write_locks, apply)
        self._wake.set()
        return vector_pb2.UpdateVectorIndexResponse(
            result=update_result(batch, len(batch.files), deleted, len(r.rows), r.index_version),
            pending=pending,
        )

    @rpc
    async def VectorSearch(
        self, request: vector_pb2.VectorSearchRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.VectorSearchResponse:
        if request.limit <= 0 or request.limit > MAX_SEARCH_LIMIT:
            raise invalid(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {request.limit}")
        if request.text and request.vector:
            raise invalid("give either text or vector, not both")
        if not request.vector:
            check_query(request.text, MAX_QUERY_CHARS, "text")
        flt = file_filter(request.languages, request.path_glob)
        repos = self._select(list(request.repositories))
        emb = await self._model()
        if request.vector:
            if len(request.vector) != emb.dims:
                raise invalid(
                    f"vector has {len(request.vector)} dimensions; the model {emb.model_id} has {emb.dims}"
                )
            q = np.asarray(request.vector, dtype=np.float32)
            norm = float(np.linalg.norm(q))
            if not np.isfinite(norm) or norm == 0.0:
                raise invalid("vector must be finite and non-zero")
            q = q / norm
        else:
            q = await asyncio.to_thread(self._encode_query_first, emb, request.text)
        langs = {lang.lower() for lang in request.languages} or None
        fetch = request.limit * OVERSAMPLE if request.path_glob else request.limit

        def search_all() -> list[tuple[str, object]]:
            found: list[tuple[str, object]] = []
            for r in repos:
                hits = r.search(q, fetch, langs)
                found += [(r.repository, f) for f in hits if flt.allows(f.meta.path, f.meta.language)]
            return found

        found = await asyncio.to_thread(search_all)
        found.sort(key=lambda rf: -rf[1].score)  # type: ignore[attr-defined]
        resp = vector_pb2.VectorSearchResponse(
            partial=any(r.pending for r in repos),
            embedded=sum(r.embedded for r in repos),
            total=sum(len(r.rows) for r in repos),
        )
        for rank, (repo, f) in enumerate(found[: request.limit]):
            m = f.meta  # type: ignore[attr-defined]
            resp.hits.append(
                common_pb2.Hit(
                    location=common_pb2.Location(
                        repository=repo, path=m.path, start_line=m.start_line, end_line=m.end_line
                    ),
                    snippet=m.snippet,
                    score=f.score,  # type: ignore[attr-defined]
                    leg_scores=[common_pb2.LegScore(leg=common_pb2.LEG_VECTOR, rank=rank, score=f.score)],  # type: ignore[attr-defined]
                    found_by=[common_pb2.LEG_VECTOR],
                    language=m.language,
                    breadcrumb=list(m.breadcrumb),
                    symbol=m.symbol,
                )
            )
        return resp

    @rpc
    async def Embed(
        self, request: vector_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.EmbedResponse:
        texts = list(request.texts)
        if not texts:
            raise invalid("texts is empty")
        if len(texts) > MAX_EMBED_TEXTS:
            raise invalid(f"at most {MAX_EMBED_TEXTS} texts per call, got {len(texts)}")
        for i, t in enumerate(texts):
            if not t.strip():
                raise invalid(f"text {i} is empty")
            if len(t) > MAX_EMBED_TEXT_CHARS:
                raise invalid(f"text {i} is {len(t)} characters; the limit is {MAX_EMBED_TEXT_CHARS}")
        emb = await self._model()
        if request.is_query:
            vecs = await asyncio.to_thread(lambda: np.stack([emb.encode_query(t) for t in texts]))
        else:
            vecs = await asyncio.to_thread(emb.encode_documents, texts)
        return vector_pb2.EmbedResponse(
            embeddings=[vector_pb2.Embedding(values=v.tolist()) for v in vecs], model=emb.model_id
        )

    @rpc
    async def GetVectorStats(
        self, request: vector_pb2.GetVectorStatsRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.GetVectorStatsResponse:
        repos = self._select(list(request.repositories))
        emb = self.embedder
        reason = emb.unavailable_reason or ("" if emb.loaded else "embedding model is loading")
        resp = vector_pb2.GetVectorStatsResponse(
            model=emb.model_id, dimensions=emb.dims, backend=emb.backend_name, unavailable_reason=reason
        )
        for r in repos:
            disk = await asyncio.to_thread(r.disk_bytes)
            resp.repositories.append(
                common_pb2.LegIndexStats(
                    repository=r.repository,
                    files=r.files,
                    items=len(r.rows),
                    disk_bytes=disk,
                    index_version=r.index_version,
                    detail=f"model {emb.model_id}, {emb.dims} dims, {r.embedded} embedded, doc text {self.doc_variant}",
                    pending=len(r.pending),
                )
            )
        return resp

    @rpc
    async def DeleteVectorRepository(
        self, request: vector_pb2.DeleteVectorRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.DeleteVectorRepositoryResponse:
        name = check_repo_name(request.repository)
        with self._repos_lock:
            r = self._repos.pop(name, None)
        if r is None:
            r = RepoIndex(self._root(name), name, self.embedder.model_id, self.doc_variant)
        deleted = await asyncio.to_thread(r.delete)
        return vector_pb2.DeleteVectorRepositoryResponse(deleted=deleted)


def add_servicer(server: grpc.aio.Server, servicer: VectorServicer) -> list[str]:
    vector_pb2_grpc.add_VectorServiceServicer_to_server(servicer, server)
    return [vector_pb2.DESCRIPTOR.services_by_name["VectorService"].full_name]


def register(server: grpc.aio.Server, settings: Settings) -> list[str]:
    """Adds VectorService to `server`; the model loads in the background, so this returns at once."""
    servicer = VectorServicer(settings)
    on_shutdown(server, servicer.close)  # stop the embedding thread before the process exits
    return add_servicer(server, servicer)


__all__ = [
    "ModelUnavailable",
    "ServiceError",
    "VectorServicer",
    "add_servicer",
    "register",
    "shared_embedder",
]
