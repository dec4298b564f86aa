"""SearchService: the public API. Indexing, search and status; talks to the legs over gRPC."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import grpc

from codesearch import __version__
from codesearch.common.admission import Gate
from codesearch.common.errors import ServiceError, check_repo_name, invalid, not_found
from codesearch.common.filters import file_filter
from codesearch.common.grpc_util import rpc, rpc_stream
from codesearch.common.lifecycle import on_shutdown
from codesearch.common.local_rpc import local_services
from codesearch.config import Settings
from codesearch.orchestrator.admission import is_expensive
from codesearch.orchestrator.indexer import Indexer
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.orphans import clean_in_background
from codesearch.orchestrator.refs import fold_identical, select, stamp_commits
from codesearch.orchestrator.registry import Registry, RepoRecord
from codesearch.orchestrator.search import SearchPipeline
from codesearch.orchestrator.stream import stream_search
from codesearch.orchestrator.watcher import Watchers
from codesearch.v1 import (
    common_pb2,
    graph_pb2,
    keyword_pb2,
    rerank_pb2,
    search_pb2,
    search_pb2_grpc,
    vector_pb2,
)

SERVICE_NAME = search_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name
STATUS_TIMEOUT_S = 2.0  # a leg that cannot say how it is within this is reported unavailable


class SearchServicer(search_pb2_grpc.SearchServiceServicer):
    def __init__(self, settings: Settings, legs: LegClients) -> None:
        self.settings = settings
        self.legs = legs
        self.registry = Registry(settings.service_dir("orchestrator"))
        self.indexer = Indexer(settings, legs, self.registry)
        self.pipeline = SearchPipeline(legs, self.registry)
        self.watchers = Watchers()
        self.gate = Gate("search")
        self.orphan_cleanup: asyncio.Task[object] | None = None

    @rpc_stream
    async def IndexRepository(
        self, request: search_pb2.IndexRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[search_pb2.IndexRepositoryResponse]:
        async for progress in self.indexer.run(request):
            if progress.phase == search_pb2.INDEX_PHASE_DONE and request.watch:
                self.watch(progress.repository)
            yield progress

    def watch(self, name: str) -> None:
        """Keeps a directory repository fresh: re-indexes the paths a file watcher reports, one run per burst."""
        record = self.registry.get(name)
        if record is None or record.ref:
            return

        async def reindex(paths: set[str]) -> None:
            request = search_pb2.IndexRepositoryRequest(
                path=record.root, name=name, changed_paths=sorted(paths)
            )
            async for _progress in self.indexer.run(request):
                pass

        self.watchers.start(name, Path(record.root), reindex)

    def resume_watching(self) -> None:
        """At start: watch again every repository that was watched when the server last stopped."""
        for record in self.registry.load().values():
            if record.watched and not record.ref:
                self.watch(record.name)

    @rpc
    async def Search(
        self, request: search_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> search_pb2.SearchResponse:
        _check_enums(request)
        records = self.registry.load()
        if request.repositories or request.refs:
            request = _with_repositories(request, select(records, request.repositories, request.refs))
        async with self.gate.admit(is_expensive(request)):
            response = await self.pipeline.search(request, context.time_remaining())
        stamp_commits(records, response.hits)
        folded = fold_identical(records, self._keyword_hashes, list(response.hits))
        if len(folded) == len(response.hits):
            return response
        answer = search_pb2.SearchResponse()
        answer.CopyFrom(response)
        del answer.hits[:]
        answer.hits.extend(folded)
        return answer

    def _keyword_hashes(self, repository: str) -> dict[str, str]:
        """Path -> content hash of every file the keyword leg holds for the repository."""
        return self.registry.manifest(repository).get("keyword", {})

    @rpc_stream
    async def StreamSearch(
        self, request: search_pb2.StreamSearchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[search_pb2.StreamSearchResponse]:
        async for message in stream_search(self.legs, self.registry, request, context.time_remaining()):
            yield message

    @rpc
    async def BuildContext(
        self, request: search_pb2.BuildContextRequest, context: grpc.aio.ServicerContext
    ) -> search_pb2.BuildContextResponse:
        from codesearch.orchestrator.context import build_context

        return await build_context(self.pipeline, self.legs, request, context.time_remaining())

    @rpc
    async def ListRepositories(
        self, request: search_pb2.ListRepositoriesRequest, context: grpc.aio.ServicerContext
    ) -> search_pb2.ListRepositoriesResponse:
        repositories = [_repo(r) for r in self.registry.load().values()]
        _, stats = await self._leg_status("vector")
        _fill_pending(repositories, stats or [], self._vector_silent(stats))
        return search_pb2.ListRepositoriesResponse(repositories=repositories)

    @rpc
    async def DeleteRepository(
        self, request: search_pb2.DeleteRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> search_pb2.DeleteRepositoryResponse:
        name = check_repo_name(request.name)
        self.watchers.stop(name)
        # Unlisted first: a search over every repository stops asking for it before its legs' data goes, instead
        # of finding it half-deleted and answering degraded. A leg whose delete fails leaves an orphan, which the
        # sweep at the next start removes (orphans.py), as does a retried delete.
        existed = self.registry.remove(name)
        calls = []
        if self.legs.keyword is not None:
            calls.append(
                self.legs.keyword.DeleteKeywordRepository(
                    keyword_pb2.DeleteKeywordRepositoryRequest(repository=name)
                )
            )
        if self.legs.graph is not None:
            calls.append(
                self.legs.graph.DeleteGraphRepository(graph_pb2.DeleteGraphRepositoryRequest(repository=name))
            )
        if self.legs.vector is not None:
            calls.append(
                self.legs.vector.DeleteVectorRepository(
                    vector_pb2.DeleteVectorRepositoryRequest(repository=name)
                )
            )
        results = await asyncio.gather(*calls, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            e = errors[0]
            if isinstance(e, grpc.aio.AioRpcError):  # the leg's own status, not UNKNOWN with a traceback
                raise ServiceError(e.code(), f"deleting {name!r}: {e.details()}") from None
            raise e
        if not existed and not any(getattr(r, "deleted", False) for r in results):
            raise not_found(f"repository {name!r} is not indexed")
        return search_pb2.DeleteRepositoryResponse(deleted=True)

    @rpc
    async def GetStatus(
        self, request: search_pb2.GetStatusRequest, context: grpc.aio.ServicerContext
    ) -> search_pb2.GetStatusResponse:
        resp = search_pb2.GetStatusResponse(version=__version__, data_dir=str(self.settings.home))
        records = self.registry.load()
        resp.repositories.extend(_repo(r) for r in records.values())
        names = ("keyword", "vector", "graph", "rerank")
        results = await asyncio.gather(*(self._leg_status(name) for name in names))
        for name, (status, stats) in zip(names, results, strict=True):
            status.name = name
            status.address = self.legs.legs[name].address or "not configured"
            resp.services.append(status)
            resp.leg_stats.extend(stats or [])
        vector_stats = results[names.index("vector")][1]
        _fill_pending(resp.repositories, vector_stats or [], self._vector_silent(vector_stats))
        return resp

    def _vector_silent(self, stats: list[common_pb2.LegIndexStats] | None) -> bool:
        """Whether a configured vector leg failed to answer its stats call (so pending counts are unknown)."""
        return self.legs.legs["vector"].stub is not None and stats is None

    async def _leg_status(
        self, name: str
    ) -> tuple[search_pb2.ServiceStatus, list[common_pb2.LegIndexStats] | None]:
        """Asks one leg how it is; an unreachable or slow leg is reported unavailable with the reason, and its
        stats are None (not known, as opposed to none)."""
        stub = self.legs.legs[name].stub
        if stub is None:
            return search_pb2.ServiceStatus(available=False, detail="not configured"), []
        method, request = {
            "keyword": ("GetKeywordStats", keyword_pb2.GetKeywordStatsRequest()),
            "vector": ("GetVectorStats", vector_pb2.GetVectorStatsRequest()),
            "graph": ("GetGraphStats", graph_pb2.GetGraphStatsRequest()),
            "rerank": ("GetRerankerInfo", rerank_pb2.GetRerankerInfoRequest()),
        }[name]
        try:
            s = await getattr(stub, method)(request, timeout=STATUS_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            return search_pb2.ServiceStatus(available=False, detail=f"{e.code().name}: {e.details()}"), None
        if name == "keyword":
            for x in s.bm25:
                x.detail = f"keyword bm25 {x.detail}".strip()
            for x in s.trigram:
                x.detail = f"keyword trigram {x.detail}".strip()
            return search_pb2.ServiceStatus(available=True, detail="bm25 + trigram"), [*s.bm25, *s.trigram]
        if name == "rerank":
            return search_pb2.ServiceStatus(
                available=s.available, detail=s.model if s.available else s.unavailable_reason
            ), []
        for x in s.repositories:
            x.detail = f"{name} {x.detail}".strip()
        if name == "vector":
            ok = not s.unavailable_reason
            detail = f"{s.model} ({s.backend}, {s.dimensions} dims)" if ok else s.unavailable_reason
            return search_pb2.ServiceStatus(available=ok, detail=detail), list(s.repositories)
        return search_pb2.ServiceStatus(available=True, detail="tree-sitter graph"), list(s.repositories)


def _check_enums(request: search_pb2.SearchRequest) -> None:
    """proto3 enums are open: an unknown number arrives as is and would be ignored silently. The filters are
    checked here too, so a bad one is INVALID_ARGUMENT even when no leg that applies them is asked."""
    file_filter(request.languages, request.path_glob)
    if request.preset not in search_pb2.Preset.values():
        raise invalid(f"unknown preset {request.preset}")
    if request.rerank not in search_pb2.RerankPolicy.values():
        raise invalid(f"unknown rerank policy {request.rerank}")


def _fill_pending(
    repositories: Iterable[search_pb2.Repository], vector_stats: list[common_pb2.LegIndexStats], silent: bool
) -> None:
    """Each repository's chunks still waiting for embeddings, from the vector leg's stats (0 when it has none);
    marked unknown when the vector leg did not answer."""
    pending = {s.repository: s.pending for s in vector_stats}
    for repo in repositories:
        repo.embeddings_pending = pending.get(repo.name, 0)
        repo.embeddings_unknown = silent


def _repo(r: RepoRecord) -> search_pb2.Repository:
    return search_pb2.Repository(
        name=r.name,
        root=r.root,
        files=r.files,
        chunks=r.chunks,
        index_version=r.index_version,
        indexed_at=r.indexed_at,
        commit=r.commit,
        ref=r.ref,
        watched=r.watched,
    )


def _with_repositories(request: search_pb2.SearchRequest, names: list[str]) -> search_pb2.SearchRequest:
    """The request over exactly these repositories (the refs filter is then applied)."""
    out = search_pb2.SearchRequest()
    out.CopyFrom(request)
    del out.repositories[:]
    out.repositories.extend(names)
    del out.refs[:]
    return out


def register(server: grpc.aio.Server, settings: Settings, local_legs: set[str]) -> list[str]:
    """Called on the server's event loop: watched repositories start watching again from here."""
    servicer = SearchServicer(settings, LegClients(settings, local_legs, local_services(server)))
    search_pb2_grpc.add_SearchServiceServicer_to_server(servicer, server)
    loop = asyncio.get_running_loop()

    def stop_watching() -> None:  # shutdown hooks run on another thread
        loop.call_soon_threadsafe(servicer.watchers.stop_all)

    on_shutdown(server, stop_watching)
    servicer.resume_watching()
    servicer.orphan_cleanup = clean_in_background(servicer.legs, servicer.registry, local_legs)  # issue 20
    return [SERVICE_NAME]
