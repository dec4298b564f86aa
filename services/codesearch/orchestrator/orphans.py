"""Orphaned partial indexes: a leg's copy of a repository the registry does not know, cleaned up at start.

A server killed while indexing a new repository leaves the legs that already committed it holding an index that
no search reaches (the registry records a repository only when every leg has it), visible only in per-leg stats.
Only legs this process hosts are cleaned: a remote leg may serve other orchestrators, whose registries differ.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc

from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.registry import Registry
from codesearch.v1 import graph_pb2, keyword_pb2, vector_pb2

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 30.0  # the process's own legs answer once its server started (seconds on a busy machine)
CALL_TIMEOUT_S = 10.0


async def clean_orphans(legs: LegClients, registry: Registry, local: set[str]) -> list[tuple[str, str]]:
    """Deletes, on every local leg, the repositories missing from the registry; [(leg, repository)] deleted."""
    known = set(registry.load())
    deleted: list[tuple[str, str]] = []
    for leg in ("keyword", "vector", "graph"):
        stub = legs.legs[leg].stub
        if leg not in local or stub is None:
            continue
        try:
            held = await _held(leg, stub)
            for repo in sorted(held - known):
                await _delete(leg, stub, repo)
                deleted.append((leg, repo))
                log.warning(
                    "deleted %s's orphaned index of %r (not in the registry: a cut index run)", leg, repo
                )
        except grpc.aio.AioRpcError as e:
            log.warning("could not clean orphaned %s indexes: %s", leg, e.details())
    return deleted


# `stub`: a leg's generated stub (untyped: grpc_tools writes no type stubs) or a ShardedStub, hence Any.
async def _held(leg: str, stub: Any) -> set[str]:
    if leg == "keyword":
        resp = await stub.GetKeywordStats(
            keyword_pb2.GetKeywordStatsRequest(), timeout=CALL_TIMEOUT_S, wait_for_ready=True
        )
        return {s.repository for s in resp.bm25}
    request = vector_pb2.GetVectorStatsRequest() if leg == "vector" else graph_pb2.GetGraphStatsRequest()
    method = "GetVectorStats" if leg == "vector" else "GetGraphStats"
    resp = await getattr(stub, method)(request, timeout=CALL_TIMEOUT_S, wait_for_ready=True)
    return {s.repository for s in resp.repositories}


async def _delete(leg: str, stub: object, repo: str) -> None:
    method, request = {
        "keyword": ("DeleteKeywordRepository", keyword_pb2.DeleteKeywordRepositoryRequest(repository=repo)),
        "vector": ("DeleteVectorRepository", vector_pb2.DeleteVectorRepositoryRequest(repository=repo)),
        "graph": ("DeleteGraphRepository", graph_pb2.DeleteGraphRepositoryRequest(repository=repo)),
    }[leg]
    await getattr(stub, method)(request, timeout=CALL_TIMEOUT_S)


def clean_in_background(legs: LegClients, registry: Registry, local: set[str]) -> asyncio.Task[object] | None:
    """Starts the clean-up on the running loop (the legs answer once the server started); None outside one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop.create_task(asyncio.wait_for(clean_orphans(legs, registry, local), READY_TIMEOUT_S))
