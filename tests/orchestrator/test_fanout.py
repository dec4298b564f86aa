"""The fan-out sends each leg the plan's budget as the RPC deadline, so the leg knows when to stop, and its
answer does not depend on which leg answered first."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.orchestrator import fanout
from codesearch.orchestrator.plan import LegPlan
from codesearch.orchestrator.ranking import adaptive
from codesearch.server import registrars
from codesearch.v1 import common_pb2, keyword_pb2, search_pb2, search_pb2_grpc, vector_pb2


class DeadlineRecorder(grpc.aio.ServerInterceptor):
    """Observes, on the real server, how much time each call arrived with (None: no deadline)."""

    def __init__(self) -> None:
        self.remaining: dict[str, list[float | None]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, method = handler.unary_unary, details.method.rsplit("/", 1)[-1]

        # The context is an aio one; grpc-stubs types every handler's as grpc.ServicerContext.
        async def observed(request: object, context: grpc.ServicerContext) -> object:
            self.remaining.setdefault(method, []).append(context.time_remaining())
            return await inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            observed,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def test_every_leg_gets_its_budget_as_its_deadline(tmp_path: Path) -> None:
    recorder = DeadlineRecorder()
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = ThreadedServer(
        registrars(settings, ("keyword", "graph", "orchestrator")), interceptors=[recorder]
    )
    server.start()
    try:
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        repo = tmp_path / "demo"
        repo.mkdir()
        (repo / "server.py").write_text("def start_server(path):\n    return open(path).read()\n")
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="demo")))
        # A name the router sends to the definition leg first, then (defined nowhere) to every leg.
        stub.Search(search_pb2.SearchRequest(query="missing_name", no_cache=True), timeout=5.0)
    finally:
        server.stop()
    for method in ("FindDefinitions", "KeywordSearch", "FindReferences"):
        budgets = recorder.remaining[method]
        # The legs get 80% of what is left of the client's 5 s (fanout.LEG_DEADLINE_SHARE); gRPC's timeout header
        # rounds up by a few milliseconds.
        assert budgets and all(b is not None and 0 < b <= 0.8 * 5.0 + 0.05 for b in budgets), (
            method,
            budgets,
        )


def _leg_answer(leg: common_pb2.Leg, snippet: str) -> fanout.LegResult:
    report = common_pb2.LegReport(leg=leg, status=common_pb2.LEG_STATUS_OK)
    return fanout.LegResult(report, [common_pb2.Hit(snippet=snippet)])


def test_a_settled_query_drops_the_vector_answer_even_when_it_came_first() -> None:
    """Which leg answers first must not change the ranking: a keyword answer that settles the query drops the
    vector leg's answer whether it has arrived or not (it used to be fused when it had)."""
    query = "return the cached value"
    plan = [
        LegPlan(common_pb2.LEG_KEYWORD, 1.0, keyword_pb2.KeywordSearchRequest(query=query), 1.0),
        LegPlan(common_pb2.LEG_VECTOR, 0.2, vector_pb2.VectorSearchRequest(text=query), 1.0),
    ]

    def settle(hits: list[common_pb2.Hit]) -> str:
        return adaptive.decisive(search_pb2.INTENT_UNDERSTAND_CODE, adaptive.keyword_coverage(query, hits))

    async def outcome(vector_first: bool) -> set[int]:
        async def keyword() -> fanout.LegResult:
            await asyncio.sleep(0.05 if vector_first else 0.0)
            return _leg_answer(common_pb2.LEG_KEYWORD, "def get(self): return the cached value")

        async def vector() -> fanout.LegResult:
            await asyncio.sleep(0.0 if vector_first else 0.05)
            return _leg_answer(common_pb2.LEG_VECTOR, "something else entirely")

        tasks = [asyncio.create_task(keyword()), asyncio.create_task(vector())]
        await asyncio.sleep(0.01)  # let the first one finish
        dropped = await fanout._settle_early(plan, tasks, settle)
        return {plan[tasks.index(t)].leg for t in dropped}

    assert asyncio.run(outcome(vector_first=True)) == {common_pb2.LEG_VECTOR}
    assert asyncio.run(outcome(vector_first=False)) == {common_pb2.LEG_VECTOR}
