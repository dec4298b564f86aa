"""GraphService: definitions, references, callees, impact, neighbours and centrality over per-repository graphs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from itertools import islice
from pathlib import Path

import grpc

from codesearch.common.errors import check_limit, check_query, check_repo_name, invalid, not_found
from codesearch.common.filters import OVERSAMPLE, file_filter
from codesearch.common.grpc_util import rpc
from codesearch.common.index_update import IndexBatch, WriteLocks, apply_update_stream, update_result
from codesearch.common.process_pool import WORKER_FAILURES, give_up, pool_for
from codesearch.common.snapshot import SnapshotDir, dir_bytes, list_repositories, open_listed, opening
from codesearch.config import MAX_QUERY_CHARS, Settings
from codesearch.graph.query import GraphReader, kind_name
from codesearch.graph.store import (
    DB_NAME,
    UpdateStats,
    build_from_messages,
    build_generation,
    connect_readonly,
    inputs_from_update,
)
from codesearch.v1 import common_pb2, graph_pb2, graph_pb2_grpc

R = graph_pb2
SERVICE_DIR = "graph"
# Symbol names and targets: the query limit the API documents (a Search passes its query as the name).
MAX_NAME_CHARS = MAX_QUERY_CHARS
DEFAULT_LIMIT = 50  # results when the request says 0
MAX_LIMIT = 1000  # per the proto: FindDefinitions/References/Callees take 1..1000
MAX_IMPACT_LIMIT = 5000  # per the proto
DEFAULT_IMPACT_LIMIT = 200  # dependents when the request says 0
DEFAULT_DEPTH = 3  # hops when the request says 0 (per the proto)
MAX_DEPTH = 10  # per the proto
MAX_NEIGHBORS = 200  # per the proto
DEFAULT_NEIGHBORS = 20  # neighbours when the request says 0
# Order used to merge per-repository resolutions: the most certain answer wins.
RESOLUTION_RANK: list[R.Resolution] = [R.RESOLUTION_EXACT, R.RESOLUTION_AMBIGUOUS, R.RESOLUTION_CASE_INSENSITIVE,
                   R.RESOLUTION_FUZZY, R.RESOLUTION_NOT_FOUND]  # fmt: skip


def _merge_resolution(values: list[R.Resolution], total: int) -> R.Resolution:
    best = min(values, key=RESOLUTION_RANK.index) if values else R.RESOLUTION_NOT_FOUND
    if best == R.RESOLUTION_EXACT and total > 1:
        return R.RESOLUTION_AMBIGUOUS
    return best


class GraphServicer(graph_pb2_grpc.GraphServiceServicer):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root: Path = settings.service_dir(SERVICE_DIR)
        self._write_locks = WriteLocks()
        self._readers: dict[str, tuple[Path, GraphReader]] = {}
        self._readers_lock = threading.Lock()

    # --- storage ------------------------------------------------------------------------------------------
    def _snapshot(self, repo: str) -> SnapshotDir:
        return SnapshotDir(self.root / repo)

    def reader(self, repo: str) -> GraphReader | None:
        """The reader of a repository's live generation (cached until the generation changes)."""
        current = self._snapshot(repo).current()
        if current is None:
            return None
        with self._readers_lock:
            cached = self._readers.get(repo)
            if cached is not None and cached[0] == current:
                return cached[1]
            # The old reader is dropped, not closed: a query may still be running on it in another thread.
            with opening(self._snapshot(repo), f"repository {repo!r} has no graph index"):
                reader = GraphReader(repo, connect_readonly(current / DB_NAME))
            self._readers[repo] = (current, reader)
            return reader

    def readers(self, repositories: list[str]) -> list[GraphReader]:
        if repositories:
            return [self._named_reader(check_repo_name(name)) for name in repositories]
        return open_listed(list_repositories(self.root), self._named_reader)

    def _named_reader(self, name: str) -> GraphReader:
        r = self.reader(name)
        if r is None:
            raise not_found(f"repository {name!r} has no graph index")
        return r

    def apply_batch(self, batch: IndexBatch) -> tuple[UpdateStats, int]:
        """Builds and commits the next generation (blocking; run in a thread)."""
        snap = self._snapshot(batch.repository)
        previous = snap.current()
        with snap.building() as building:
            previous_db = previous / DB_NAME if previous else None
            stats = self._build_in_worker(batch, previous_db, building / DB_NAME)
            if stats is None:
                stats = build_generation(
                    previous_db,
                    building / DB_NAME,
                    inputs_from_update(batch.files),
                    batch.deleted_paths,
                    batch.replace_all,
                    batch.index_version,
                )
            snap.commit(building)
        return stats, batch.index_version

    def _build_in_worker(
        self, batch: IndexBatch, previous_db: Path | None, new_db: Path
    ) -> UpdateStats | None:
        """The generation built in a worker process, off this process's GIL, for a large update; None: build it
        here (process_pool.pool_for says when)."""
        pool = pool_for(self.settings.index_workers, len(batch.files), "graph build")
        if pool is None:
            return None
        files = [f.SerializeToString() for f in batch.files]
        future = pool.submit(
            build_from_messages, previous_db, new_db, files, batch.deleted_paths, batch.replace_all,
            batch.index_version,
        )  # fmt: skip
        try:
            return future.result()
        except WORKER_FAILURES as err:
            give_up(pool, err, "graph build")
            new_db.unlink(missing_ok=True)  # a worker that died may have left half a database
            return None

    # --- RPCs ----------------------------------------------------------------------------------------------
    @rpc
    async def UpdateGraphIndex(
        self,
        request_iterator: AsyncIterator[graph_pb2.UpdateGraphIndexRequest],
        context: grpc.aio.ServicerContext,
    ) -> graph_pb2.UpdateGraphIndexResponse:
        batch, (stats, version) = await apply_update_stream(
            request_iterator, self._write_locks, self.apply_batch
        )
        return graph_pb2.UpdateGraphIndexResponse(
            result=update_result(
                batch, stats.files_upserted, stats.files_deleted, stats.definitions, version
            ),
            files_with_errors=stats.files_with_errors,
        )

    @rpc
    async def FindDefinitions(
        self, request: graph_pb2.FindDefinitionsRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.FindDefinitionsResponse:
        name = check_query(request.name, MAX_NAME_CHARS, "name")
        limit = check_limit(request.limit, DEFAULT_LIMIT, MAX_LIMIT)
        if request.kind not in R.SymbolKind.values():
            raise invalid(f"unknown symbol kind {request.kind}")
        kind = kind_name(request.kind)
        flt = file_filter([request.language, *request.languages], request.path_glob)
        readers = self.readers(list(request.repositories))

        def work() -> graph_pb2.FindDefinitionsResponse:
            results = [(r, *r.lookup(name, kind, request.language)) for r in readers]
            resolutions = [res for _r, res, defs in results if defs]
            merged = [(d.score(), r, d) for r, _res, defs in results for d in defs]
            merged.sort(key=lambda x: -x[0])
            resolution = _merge_resolution(resolutions, len(merged))
            symbols = (r.symbol(d) for _s, r, d in merged)
            return graph_pb2.FindDefinitionsResponse(
                symbols=list(islice((s for s in symbols if flt.allows(s.location.path, s.language)), limit)),
                resolution=resolution,
            )

        return await asyncio.to_thread(work)

    @rpc
    async def FindReferences(
        self, request: graph_pb2.FindReferencesRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.FindReferencesResponse:
        name = check_query(request.name, MAX_NAME_CHARS, "name")
        limit = check_limit(request.limit, DEFAULT_LIMIT, MAX_LIMIT)
        flt = file_filter(request.languages, request.path_glob)
        readers = self.readers(list(request.repositories))

        def work() -> graph_pb2.FindReferencesResponse:
            resolutions, refs, targets = [], [], []
            for r in readers:
                res, tdefs, rrefs = r.references(name, limit * OVERSAMPLE if flt.active else limit)
                if tdefs or rrefs:
                    resolutions.append(res)
                refs += [(c, ref) for c, ref in rrefs if flt.allows(ref.location.path)]
                targets += [r.symbol(d) for d in tdefs]
            if len(readers) > 1:  # keep each repository's file grouping, most central group first
                refs.sort(key=lambda x: -x[0])
            resolution = _merge_resolution(resolutions, len(targets))
            if resolution == R.RESOLUTION_EXACT and not targets:
                resolution = R.RESOLUTION_AMBIGUOUS
            return graph_pb2.FindReferencesResponse(
                references=[ref for _c, ref in refs[:limit]],
                resolution=resolution,
                targets=targets,
            )

        return await asyncio.to_thread(work)

    @rpc
    async def FindCallees(
        self, request: graph_pb2.FindCalleesRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.FindCalleesResponse:
        name = check_query(request.name, MAX_NAME_CHARS, "name")
        limit = check_limit(request.limit, DEFAULT_LIMIT, MAX_LIMIT)
        flt = file_filter(request.languages, request.path_glob)
        readers = self.readers(list(request.repositories))

        def work() -> graph_pb2.FindCalleesResponse:
            best: tuple[R.Resolution, GraphReader, list, list] | None = None
            for r in readers:
                res, defs, calls = r.callees(name, limit)
                if res == R.RESOLUTION_NOT_FOUND:
                    continue
                if best is None or RESOLUTION_RANK.index(res) < RESOLUTION_RANK.index(best[0]):
                    best = (res, r, defs, calls)
            if best is None:
                return graph_pb2.FindCalleesResponse(resolution=R.RESOLUTION_NOT_FOUND)
            res, r, defs, calls = best
            symbols = (r.symbol(d) for d in defs)
            return graph_pb2.FindCalleesResponse(
                callees=[s for s in symbols if flt.allows(s.location.path, s.language)],
                resolution=res,
                calls=calls,
            )

        return await asyncio.to_thread(work)

    @rpc
    async def Impact(
        self, request: graph_pb2.ImpactRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.ImpactResponse:
        target = check_query(request.target, MAX_NAME_CHARS, "target")
        if request.max_depth < 0 or request.max_depth > MAX_DEPTH:
            raise invalid(f"max_depth must be between 1 and {MAX_DEPTH}, got {request.max_depth}")
        depth = request.max_depth or DEFAULT_DEPTH
        limit = check_limit(request.limit, DEFAULT_IMPACT_LIMIT, MAX_IMPACT_LIMIT)
        flt = file_filter(request.languages, request.path_glob)
        readers = self.readers(list(request.repositories))

        def work() -> graph_pb2.ImpactResponse:
            resolutions, items, resolved = [], [], []
            for r in readers:
                res, names, ritems = r.impact(target, depth, limit * OVERSAMPLE if flt.active else limit)
                if names:
                    resolutions.append(res)
                resolved += names
                items += [it for it in ritems if flt.allows(it.location.path)]
            items.sort(key=lambda it: it.distance)  # stable: keeps each repository's order within a distance
            return graph_pb2.ImpactResponse(
                items=items[:limit],
                resolution=_merge_resolution(resolutions, len(resolved)),
                resolved_targets=resolved,
            )

        return await asyncio.to_thread(work)

    @rpc
    async def Neighbors(
        self, request: graph_pb2.NeighborsRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.NeighborsResponse:
        loc = request.location
        if not loc.repository or not loc.path:
            raise invalid("location needs a repository and a path")
        if loc.start_line < 1 or (loc.end_line and loc.end_line < loc.start_line):
            raise invalid("location lines must be 1-based with end_line >= start_line")
        limit = check_limit(request.limit, DEFAULT_NEIGHBORS, MAX_NEIGHBORS)
        reader = self.readers([loc.repository])[0]

        def work() -> graph_pb2.NeighborsResponse:
            found = reader.neighbors(loc.path, loc.start_line, loc.end_line or loc.start_line, limit)
            return graph_pb2.NeighborsResponse(
                neighbors=[graph_pb2.Neighbor(symbol=reader.symbol(d), relation=rel) for d, rel in found]
            )

        return await asyncio.to_thread(work)

    @rpc
    async def Centrality(
        self, request: graph_pb2.CentralityRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.CentralityResponse:
        repos = sorted({loc.repository for loc in request.locations})
        for name in repos:
            check_repo_name(name)
        # A location in a repository without a graph gets 0 ("no definition known"), not an error: the
        # orchestrator asks for every hit and some legs may know repositories this one does not.
        readers = {name: self.reader(name) for name in repos}

        def work() -> graph_pb2.CentralityResponse:
            values = []
            for loc in request.locations:
                r = readers.get(loc.repository)
                values.append(
                    r.centrality(loc.path, loc.start_line, loc.end_line or loc.start_line) if r else 0.0
                )
            return graph_pb2.CentralityResponse(values=values)

        return await asyncio.to_thread(work)

    @rpc
    async def GetGraphStats(
        self, request: graph_pb2.GetGraphStatsRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.GetGraphStatsResponse:
        readers = self.readers(list(request.repositories))

        def work() -> graph_pb2.GetGraphStatsResponse:
            out = []
            for r in readers:
                files, defs, edges, errors, version = r.stats()
                out.append(
                    common_pb2.LegIndexStats(
                        repository=r.repository,
                        files=files,
                        items=defs,
                        disk_bytes=dir_bytes(self._snapshot(r.repository).current()),
                        index_version=version,
                        detail=f"{edges} edges, {errors} files with parse errors",
                    )
                )
            return graph_pb2.GetGraphStatsResponse(repositories=out)

        return await asyncio.to_thread(work)

    @rpc
    async def DeleteGraphRepository(
        self, request: graph_pb2.DeleteGraphRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> graph_pb2.DeleteGraphRepositoryResponse:
        name = check_repo_name(request.repository)
        lock = self._write_locks.of(name)
        async with lock:
            if self._snapshot(name).current() is None:
                raise not_found(f"repository {name!r} has no graph index")
            with self._readers_lock:
                self._readers.pop(name, None)
            deleted = await asyncio.to_thread(self._snapshot(name).delete)
        return graph_pb2.DeleteGraphRepositoryResponse(deleted=deleted)


def register(server: grpc.aio.Server, settings: Settings) -> list[str]:
    graph_pb2_grpc.add_GraphServiceServicer_to_server(GraphServicer(settings), server)
    return [graph_pb2.DESCRIPTOR.services_by_name["GraphService"].full_name]
