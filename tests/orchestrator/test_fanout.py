"""The fan-out sends each leg the plan's budget as the RPC deadline, so the leg knows when to stop."""

from __future__ import annotations

from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc


class DeadlineRecorder(grpc.aio.ServerInterceptor):
    """Observes, on the real server, how much time each call arrived with (None: no deadline)."""

    def __init__(self) -> None:
        self.remaining: dict[str, list[float | None]] = {}

    async def intercept_service(self, continuation, details):  # type: ignore[no-untyped-def]
        handler = await continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner, method = handler.unary_unary, details.method.rsplit("/", 1)[-1]

        async def observed(request, context):  # type: ignore[no-untyped-def]
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
