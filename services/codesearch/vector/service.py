"""VectorService: dense retrieval over chunk embeddings, one usearch index per repository and tier.

Updates commit the chunk table with every chunk's static vector (vector/tiers.py) and return how many chunks
the transformer tier still needs; a background thread embeds them in batches (embedding cache first) and saves
the index as it goes. A search answers from the best tier complete in every repository it searches (partial=
true only when no tier is), and a restart resumes the remaining work.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import numpy as np

from codesearch.common.errors import (
    MODEL_LOADING,
    ServiceError,
    check_repo_name,
    invalid,
    not_found,
    unavailable,
)
from codesearch.common.filters import OVERSAMPLE, file_filter
from codesearch.common.grpc_util import rpc
from codesearch.common.index_update import IndexBatch, WriteLocks, apply_update_stream, update_result
from codesearch.common.lifecycle import on_shutdown
from codesearch.common.snapshot import SnapshotDir, list_repositories, open_listed, opening
from codesearch.config import Settings
from codesearch.v1 import vector_pb2, vector_pb2_grpc
from codesearch.vector import messages
from codesearch.vector import tiers as vtiers
from codesearch.vector.embedder import Embedder, ModelUnavailable
from codesearch.vector.embedding_cache import EmbeddingCache
from codesearch.vector.foreground import Foreground
from codesearch.vector.late_interaction import LateInteraction
from codesearch.vector.store import Encode, Found, RepoIndex
from codesearch.vector.tier_models import SERVICE, query_booster, shared_embedder, tier_embedders, tier_info

log = logging.getLogger(__name__)

QUERY_YIELD_BATCH = 8  # documents per model call in the background: a query waits for at most one of these
EMBED_BATCH = 64  # chunks per background step: big enough to batch well, small enough to save progress often
SAVE_INTERVAL_S = (
    5.0  # how often partial progress reaches disk; a crash loses at most this much (it is cached)
)
IDLE_WAIT_S = 1.0  # the worker re-checks for work at least this often even without a wake-up
WAIT_IDLE_POLL_S = 0.05  # wait_idle() polling period


class VectorServicer(vector_pb2_grpc.VectorServiceServicer):
    def __init__(self, settings: Settings, start_worker: bool = True) -> None:
        self.settings = settings
        self.dir: Path = settings.service_dir(SERVICE)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.embedders = tier_embedders(settings)
        self.tiers = tuple(self.embedders)  # worst to best
        # The best tier's model: what Embed uses by default and GetVectorStats names first.
        self.embedder = self.embedders[self.tiers[-1]]
        self.model_ids = {tier: emb.model_id for tier, emb in self.embedders.items()}
        # The static tier's model embeds its queries, with the query boost; late interaction re-scores with it.
        static = self.embedders.get(vtiers.STATIC)
        self.booster = query_booster(settings, static) if static is not None else None
        self.late = LateInteraction(settings.late_interaction_weight, static)
        self.cache = EmbeddingCache(settings.embedding_cache_file())
        self._repos: dict[str, RepoIndex] = {}
        self._repos_lock = threading.Lock()
        self._write_locks = WriteLocks()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._foreground = Foreground(self._stop)
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
                with opening(SnapshotDir(self._root(name)), f"repository {name!r} has no vector index"):
                    r = RepoIndex(self._root(name), name, self.model_ids)
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
            return open_listed(self.known_repositories(), self.repo)
        return [self.repo(check_repo_name(n)) for n in dict.fromkeys(names)]

    # ----- background embedding -----
    def _run(self) -> None:
        for emb in self.embedders.values():  # the static tier first: updates wait for it
            emb.load()
        # With the static tier alone, preparing the boost loads the transformer for queries.
        if self.booster is not None:
            self.booster.prepare()
        for name in list_repositories(self.dir):
            try:
                self.repo(name)
            except Exception:
                log.exception("cannot open vector index of %s", name)
        last_save = time.monotonic()
        while not self._stop.is_set():
            worked = False
            with self._repos_lock:
                repos = [r for r in self._repos.values() if r.pending]
            for r in repos:
                for tier in self._usable_tiers():
                    try:
                        worked |= self._embed_step(r, tier)
                        if not r.pending or time.monotonic() - last_save > SAVE_INTERVAL_S:
                            r.save()
                            last_save = time.monotonic()
                    except Exception:
                        log.exception("embedding pending chunks of %s (%s tier) failed", r.repository, tier)
            if not worked:
                self._wake.wait(IDLE_WAIT_S)
                self._wake.clear()

    def _usable_tiers(self) -> list[str]:
        """Configured tiers whose model is loaded, worst to best."""
        return [
            t for t in self.tiers if self.embedders[t].loaded and not self.embedders[t].unavailable_reason
        ]

    def _upgrading(self, repos: list[RepoIndex], tier: str) -> bool:
        """Whether a better tier than `tier` will still take over some of `repos` (its model not known unusable)."""
        better = self.tiers[self.tiers.index(tier) + 1 :] if tier in self.tiers else []
        progress = [r.progress() for r in repos]
        return any(
            not self.embedders[t].unavailable_reason and any(p[t][0] < p[t][1] for p in progress)
            for t in better
        )

    def _embed_step(self, r: RepoIndex, tier: str) -> bool:
        todo = r.pending_texts(tier, EMBED_BATCH)
        if not todo:
            return False
        emb = self.embedders[tier]
        keys = [k for k, _, _ in todo]

        def encode(texts: list[str]) -> np.ndarray:  # in sub-batches, each after the foreground's turn
            parts = []
            for i in range(0, len(texts), QUERY_YIELD_BATCH):
                self._foreground.wait_turn()
                parts.append(emb.encode_documents(texts[i : i + QUERY_YIELD_BATCH]))
            return np.concatenate(parts)

        found, encoded = self.cache.fill(emb.model_id, [(h, t) for _, h, t in todo], encode)
        self.embedded_by_model += encoded
        r.add_vectors(tier, keys, np.stack([found[h] for _, h, _ in todo]))
        return True

    def _embed_now(self) -> dict[str, Encode]:
        """The tiers an update embeds before it commits: the static one, when its model loads (the first time
        on a machine that includes distilling it)."""
        static = self.embedders.get(vtiers.STATIC)
        if static is None or not static.load():
            return {}
        return {vtiers.STATIC: static.encode_documents}

    def answering(self, repos: list[RepoIndex]) -> str:
        """The one tier that answers a query over `repos` (vector/tiers.py)."""
        usable = self._usable_tiers()
        if not usable:
            raise unavailable(
                "; ".join(e.unavailable_reason or f"{t} {MODEL_LOADING}" for t, e in self.embedders.items())
            )
        return vtiers.answering_tier([r.progress() for r in repos], usable)

    def _encode_query_first(self, encode: Callable[[str], np.ndarray], text: str) -> np.ndarray:
        """Embeds a query while the background worker waits (vector/foreground.py)."""
        with self._foreground.query():
            return encode(text)

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
            if all(e.unavailable_reason for e in self.embedders.values()):
                return False
            await asyncio.sleep(WAIT_IDLE_POLL_S)
        return False

    async def _model(self, tier: str) -> Embedder:
        emb = self.embedders[tier]
        if not emb.loaded:
            await asyncio.to_thread(emb.load)
        if emb.unavailable_reason:
            raise unavailable(emb.unavailable_reason)
        return emb

    # ----- RPCs -----
    @rpc
    async def UpdateVectorIndex(
        self,
        request_iterator: AsyncIterator[vector_pb2.UpdateVectorIndexRequest],
        context: grpc.aio.ServicerContext,
    ) -> vector_pb2.UpdateVectorIndexResponse:
        def apply(batch: IndexBatch) -> tuple[RepoIndex, int, int]:
            r = self.repo(batch.repository, create=True)
            with self._foreground.update():
                t0 = time.perf_counter()
                embed_now = self._embed_now()
                deleted, pending = r.apply(batch, self.cache, embed_now)
                log.info(
                    "vector update of %s: %d chunks committed in %.1fs with %s vectors, %d chunks left to embed",
                    batch.repository,
                    len(r.rows),
                    time.perf_counter() - t0,
                    "+".join(embed_now) or "cached",
                    pending,
                )
                return r, deleted, pending

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
        messages.check_search(request)
        flt = file_filter(request.languages, request.path_glob)
        repos = self._select(list(request.repositories))
        first = self.embedders[self.tiers[0]]  # a better tier answers only once loaded; never wait for it
        if not first.loaded:
            await asyncio.to_thread(first.load)
        # One tier for the whole query, chosen once: an upgrade finishing meanwhile changes the next query.
        tier = self.answering(repos)
        emb = await self._model(tier)
        # The static tier's query is boosted once the booster is ready; until then the plain static query answers
        # at once (never waiting for the transformer) and the answer is marked as upgrading.
        boost = (
            self.booster
            if tier == vtiers.STATIC and not (request.plain_static_query or request.vector)
            else None
        )
        boosted = False
        static_query: np.ndarray | None = None  # late interaction blends the static candidates' heads with it
        if request.vector:
            q = messages.given_vector(list(request.vector), emb.dims, tier, emb.model_id)
            query_encoder = "the request's vector"
        else:
            if boost is not None and boost.ready:
                encode, query_encoder, boosted = boost.encode, boost.encoder, True
            else:
                encode, query_encoder = emb.encode_query, emb.model_id
            q = await asyncio.to_thread(self._encode_query_first, encode, request.text)
            if tier == vtiers.STATIC:
                static_query = q
        langs = {lang.lower() for lang in request.languages} or None
        fetch = request.limit * OVERSAMPLE if request.path_glob else request.limit

        def search_all() -> tuple[list[tuple[str, Found]], str]:
            found = []
            for r in repos:
                hits = r.search(tier, q, fetch, langs)
                found += [(r.repository, f) for f in hits if flt.allows(f.meta.path, f.meta.language)]
            found.sort(key=lambda rf: -rf[1].score)
            if not request.late_interaction or request.vector:
                return found, ""
            return self.late.rescore(request.text, found, {r.repository: r for r in repos}, static_query)

        found, rescored_by = await asyncio.to_thread(search_all)
        progress = [r.progress()[tier] for r in repos]
        embedded, total = sum(e for e, _ in progress), sum(t for _, t in progress)
        resp = vector_pb2.VectorSearchResponse(
            partial=embedded < total,
            embedded=embedded,
            total=total,
            tier=tier,
            model=emb.model_id,
            upgrading=self._upgrading(repos, tier) or (boost is not None and boost.pending),
            query_encoder=query_encoder,
            query_boosted=boosted,
            rescored_by=rescored_by,
        )
        resp.hits.extend(messages.hit(repo, rank, f) for rank, (repo, f) in enumerate(found[: request.limit]))
        return resp

    @rpc
    async def Embed(
        self, request: vector_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.EmbedResponse:
        texts = list(request.texts)
        messages.check_embed_texts(texts)
        tier = request.tier or self.tiers[-1]
        if tier not in self.embedders:
            raise invalid(f"tier {tier!r} is not configured; configured: {', '.join(self.tiers)}")
        emb = await self._model(tier)
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
        infos = [tier_info(t, self.embedders[t]) for t in self.tiers]
        best = infos[-1]
        resp = vector_pb2.GetVectorStatsResponse(
            model=best.model,
            dimensions=best.dimensions,
            backend=best.backend,
            unavailable_reason=best.unavailable_reason,
            tiers=infos,
        )
        usable = self._usable_tiers()
        static_query = self.booster.state if self.booster is not None else ""
        for r in repos:
            disk = await asyncio.to_thread(r.disk_bytes)
            messages.add_repository_stats(resp, r, self.tiers, usable, disk, static_query)
        return resp

    @rpc
    async def DeleteVectorRepository(
        self, request: vector_pb2.DeleteVectorRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> vector_pb2.DeleteVectorRepositoryResponse:
        name = check_repo_name(request.repository)
        async with self._write_locks.of(name):
            with self._repos_lock:
                r = self._repos.pop(name, None)
            # One never opened is removed without opening it: a broken index can still be deleted.
            delete = r.delete if r is not None else SnapshotDir(self._root(name)).delete
            deleted = await asyncio.to_thread(delete)
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
