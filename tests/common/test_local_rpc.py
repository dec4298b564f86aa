"""Unary calls to a leg hosted in the same server skip the network but not the server's rules: the same answer
bytes as over the wire, the leg's status as the caller's AioRpcError, the deadline, the interceptors (a bearer
token, a recorder), and streams still over the channel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from codesearch.common import security
from codesearch.common.aio_thread import ThreadedServer
from codesearch.common.local_rpc import LocalChannel, LocalContext, LocalServices, local_services
from codesearch.config import MAX_MESSAGE_BYTES, Settings
from codesearch.orchestrator.legs import CHANNEL_OPTIONS
from codesearch.server import registrars
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

SOURCE = 'def retry_with_backoff(fn):\n    """Calls fn again, waiting longer each time."""\n    return fn()\n'


class Recorder(grpc.aio.ServerInterceptor):
    """The methods that reached the server's interceptors, and those whose handler ran without the network."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.local: list[str] = []

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = details.method.rsplit("/", 1)[-1]
        self.methods.append(method)
        handler = await continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary

        # The context is an aio one, or a LocalContext; grpc-stubs types every handler's as grpc.ServicerContext.
        async def observed(request: object, context: grpc.ServicerContext) -> object:
            if isinstance(context, LocalContext):
                self.local.append(method)
            return await inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            observed, handler.request_deserializer, handler.response_serializer
        )


def _indexed_server(
    tmp_path: Path, interceptors: list[grpc.aio.ServerInterceptor], token: str = ""
) -> tuple[ThreadedServer, Settings]:
    env = {"CODESEARCH_HOME": str(tmp_path / "home")} | ({"CODESEARCH_AUTH_TOKEN": token} if token else {})
    settings = Settings.from_env(env)
    server = ThreadedServer(
        registrars(settings, ("keyword", "graph", "orchestrator")), interceptors=interceptors
    )
    server.start()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "retry.py").write_text(SOURCE)
    channel = security.sync_channel(server.address, settings)  # with the bearer token when one is set
    list(
        search_pb2_grpc.SearchServiceStub(channel).IndexRepository(
            search_pb2.IndexRepositoryRequest(path=str(repo), name="repo")
        )
    )
    return server, settings


def _running(server: ThreadedServer) -> grpc.aio.Server:
    grpc_server = server.grpc_server
    assert grpc_server is not None  # None only when stopped
    return grpc_server


def _local_and_wire(
    server: ThreadedServer, settings: Settings, request: keyword_pb2.KeywordSearchRequest
) -> tuple[bytes, bytes]:
    served = local_services(_running(server))
    assert served is not None and "/codesearch.v1.KeywordService/KeywordSearch" in served.handlers

    async def both() -> tuple[bytes, bytes]:
        wire = security.aio_channel(server.address, settings, CHANNEL_OPTIONS)
        token = security.bearer_metadata(settings.auth_token)
        local = keyword_pb2_grpc.KeywordServiceStub(LocalChannel(served, wire, token))
        a = await local.KeywordSearch(request, timeout=5)
        b = await keyword_pb2_grpc.KeywordServiceStub(wire).KeywordSearch(request, timeout=5)
        await wire.close(grace=None)
        return a.SerializeToString(deterministic=True), b.SerializeToString(deterministic=True)

    return server.run(both())


def test_a_local_call_answers_what_the_wire_answers_through_the_same_interceptors(tmp_path: Path) -> None:
    recorder = Recorder()
    server, settings = _indexed_server(tmp_path, [recorder])
    try:
        recorder.methods.clear()
        recorder.local.clear()
        local, wire = _local_and_wire(
            server, settings, keyword_pb2.KeywordSearchRequest(query="retry backoff", limit=5)
        )
        assert local == wire and keyword_pb2.KeywordSearchResponse.FromString(local).hits
        # Both calls went through the interceptors, one of them without the network (background calls aside).
        assert recorder.methods.count("KeywordSearch") == 2 and recorder.local.count("KeywordSearch") == 1
        # The orchestrator's own leg calls are local; the client's Search came over the wire.
        recorder.methods.clear()
        recorder.local.clear()
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        assert stub.Search(
            search_pb2.SearchRequest(query="how does retry with backoff wait", no_cache=True)
        ).hits
        assert "Search" in recorder.methods and "Search" not in recorder.local
        assert "KeywordSearch" in recorder.local
    finally:
        server.stop()


def test_a_token_protected_server_accepts_its_own_local_calls(tmp_path: Path) -> None:
    token = "s3cret-token-for-the-test"
    server, settings = _indexed_server(
        tmp_path, security.server_interceptors(Settings.from_env({"CODESEARCH_AUTH_TOKEN": token})), token
    )
    try:
        local, wire = _local_and_wire(
            server, settings, keyword_pb2.KeywordSearchRequest(query="retry", limit=5)
        )
        assert local == wire
    finally:
        server.stop()


def test_statuses_and_deadlines_reach_the_caller_as_from_the_wire(tmp_path: Path) -> None:
    server, settings = _indexed_server(tmp_path, [])
    served = local_services(_running(server))
    assert served is not None

    async def codes() -> list[grpc.StatusCode]:
        wire = grpc.aio.insecure_channel(server.address)
        local = keyword_pb2_grpc.KeywordServiceStub(LocalChannel(served, wire, []))
        out = []
        for request in (
            keyword_pb2.KeywordSearchRequest(query="", limit=5),  # no query: INVALID_ARGUMENT
            keyword_pb2.KeywordSearchRequest(query="retry", repositories=["nowhere"]),  # NOT_FOUND
        ):
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await local.KeywordSearch(request, timeout=5)
            out.append(e.value.code())
        await wire.close(grace=None)
        return out

    try:
        assert server.run(codes()) == [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND]
    finally:
        server.stop()


def test_a_slow_handler_ends_at_the_deadline_a_big_answer_at_the_size_limit_and_a_raise_as_unknown() -> None:
    async def slow(request: bytes, context: LocalContext) -> bytes:
        assert 0 < (context.time_remaining() or 0) <= 0.05
        await asyncio.sleep(10)
        return request

    async def big(request: bytes, context: LocalContext) -> bytes:
        return b"x" * 2_000

    async def broken(request: bytes, context: LocalContext) -> bytes:
        raise KeyError("a handler's bug")

    services = LocalServices([], max_message_bytes=1_000)
    same = lambda b: b  # noqa: E731  # bytes in, bytes out
    services.record(
        "t.T",
        {
            name: grpc.unary_unary_rpc_method_handler(f, same, same)
            for name, f in (("Slow", slow), ("Big", big), ("Broken", broken))
        },
    )

    async def codes() -> list[grpc.StatusCode]:
        out = []
        for method in ("/t.T/Slow", "/t.T/Big", "/t.T/Broken"):
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await services.call(method, b"hi", same, same, timeout=0.05, metadata=[])
            out.append(e.value.code())
        return out

    # A handler that raises ends UNKNOWN, as over the wire, so the orchestrator reports that leg degraded.
    assert asyncio.run(codes()) == [
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.UNKNOWN,
    ]
    assert MAX_MESSAGE_BYTES > 1_000  # the servers use the configured limit
