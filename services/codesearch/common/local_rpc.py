"""Unary calls to a service hosted in this same server, without the network.

In the one-process server the orchestrator dialled its own address for every leg call: each hop cost ~2.2 ms
of wall time and ~2.4 ms of CPU in gRPC's own machinery (`codesearch_lab/bench/latency_hop.py`), 2-4 hops per
search. Here a unary call runs what the server would run for it, in the caller's task: the request serialised
and parsed by the method's own (de)serialisers, the server's interceptors (auth, undecodable bytes, admission
gates, a test's recorders; tracing needs none, the caller's context carries the trace), the handler with a
context that knows the deadline, and the answer serialised and parsed back. A status the handler ends with
reaches the caller as the `grpc.aio.AioRpcError` it would have got from the wire. Streams (index updates)
still go over the channel.
"""

from __future__ import annotations

import asyncio
import collections
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, cast

import grpc


class _CallDetails(
    collections.namedtuple("_CallDetails", ("method", "invocation_metadata")), grpc.HandlerCallDetails
):
    pass


class LocalContext:
    """The part of grpc.aio.ServicerContext that handlers and interceptors use, for one local call."""

    def __init__(self, deadline: float | None, metadata: Sequence[tuple[str, str]]) -> None:
        self._deadline = deadline  # time.monotonic() by which the call must end; None: no deadline
        self._metadata = tuple(metadata)
        self._done: list[Callable[[Any], None]] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""
        self.trailing_metadata: Sequence[tuple[str, str | bytes]] = ()

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return "local"

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        self._done.append(callback)

    def cancelled(self) -> bool:
        return False

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> None:
        self.code, self.details, self.trailing_metadata = code, details, trailing_metadata
        raise grpc.aio.AbortError(details)

    def finish(self) -> None:
        for callback in self._done:
            callback(self)


Interceptors = Sequence[grpc.aio.ServerInterceptor]
_Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]]


class LocalServices:
    """The unary method handlers of the services registered on one server, and that server's interceptors."""

    def __init__(self, interceptors: Interceptors, max_message_bytes: int) -> None:
        self.interceptors = list(interceptors)
        self.max_message_bytes = max_message_bytes
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def record(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        for name, handler in handlers.items():
            if handler.unary_unary is not None:
                self.handlers[f"/{service}/{name}"] = handler

    async def _handler(self, details: grpc.HandlerCallDetails, i: int = 0) -> grpc.RpcMethodHandler | None:
        """The handler as the server's interceptors, in order, hand it on (each may wrap or replace it)."""
        if i == len(self.interceptors):
            return self.handlers.get(details.method)

        async def continuation(d: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
            return await self._handler(d, i + 1)

        # grpc-stubs 1.53 types the handler a continuation gives as never None; gRPC gives None for an unknown method.
        return await self.interceptors[i].intercept_service(cast(_Continuation, continuation), details)

    async def call(
        self,
        method: str,
        request: Any,
        serialize: Callable[[Any], bytes],
        deserialize: Callable[[bytes], Any],
        timeout: float | None,
        metadata: Sequence[tuple[str, str]],
    ) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        handler: Any = await self._handler(_CallDetails(method, tuple(metadata)))
        context = LocalContext(deadline, metadata)
        try:
            parsed = handler.request_deserializer(self._sized(serialize(request), "request"))
            # Its own task, as the server would run it: what the handler sets in its context stays there.
            answer = asyncio.ensure_future(handler.unary_unary(parsed, context))
            response = await asyncio.wait_for(answer, timeout)
        except grpc.aio.AbortError:
            raise _error(
                context.code or grpc.StatusCode.UNKNOWN, context.details, context.trailing_metadata
            ) from None
        except asyncio.TimeoutError:
            raise _error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
        except Exception as e:  # anything else the handler raises: UNKNOWN, as grpc's server answers it
            raise _error(grpc.StatusCode.UNKNOWN, f"Unexpected {type(e)}: {e}") from e
        finally:
            context.finish()
        return deserialize(self._sized(handler.response_serializer(response), "response"))

    def _sized(self, data: bytes, what: str) -> bytes:
        if len(data) > self.max_message_bytes:
            raise _error(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{what} of {len(data)} bytes is over the limit of {self.max_message_bytes}",
            )
        return data


def _error(
    code: grpc.StatusCode, details: str, trailing: Sequence[tuple[str, str | bytes]] = ()
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details, None)


class LocalChannel:
    """A channel for the generated stubs: unary calls to methods `services` holds run locally, the rest go over
    `channel` (streams, or a service this server does not host)."""

    def __init__(
        self, services: LocalServices, channel: grpc.aio.Channel, metadata: Sequence[tuple[str, str]]
    ):
        self._services = services
        self._channel = channel
        self._metadata = list(metadata)  # what the channel's interceptors would add (the bearer token)

    def unary_unary(
        self,
        method: str,
        request_serializer: Callable[[Any], bytes],
        response_deserializer: Callable[[bytes], Any],
        **kwargs: Any,
    ) -> Callable[..., Awaitable[Any]]:
        if method not in self._services.handlers:
            return self._channel.unary_unary(method, request_serializer, response_deserializer, **kwargs)

        def call(
            request: Any, *, timeout: float | None = None, metadata: Any = None, **_: Any
        ) -> Awaitable[Any]:
            return self._services.call(
                method,
                request,
                request_serializer,
                response_deserializer,
                timeout,
                [*(metadata or ()), *self._metadata],
            )

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)  # unary_stream, stream_unary, close, ...


# The services each server hosts, recorded as they register (server.py, common/aio_thread.py).
_SERVED: weakref.WeakKeyDictionary[grpc.aio.Server, LocalServices] = weakref.WeakKeyDictionary()


class _RegisteringServer(Protocol):
    """A grpc.aio.Server as gRPC 1.85 has it: the generated add_*_to_server functions call this method."""

    add_registered_method_handlers: Callable[[str, dict[str, grpc.RpcMethodHandler]], None]


def serve_locally(server: grpc.aio.Server, interceptors: Interceptors, max_message_bytes: int) -> None:
    """Records, from now on, the unary handlers of every service added to `server`, for `local_services`."""
    services = LocalServices([i for i in interceptors if not _traces(i)], max_message_bytes)
    registering = cast(_RegisteringServer, server)  # grpc-stubs 1.53 lacks add_registered_method_handlers
    add = registering.add_registered_method_handlers

    def add_and_record(service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        services.record(service, handlers)
        add(service, handlers)

    registering.add_registered_method_handlers = add_and_record
    _SERVED[server] = services


def local_services(server: grpc.aio.Server) -> LocalServices | None:
    return _SERVED.get(server)


def _traces(interceptor: object) -> bool:
    """Tracing interceptors are left out: a local call runs in the caller's task, whose context has the span."""
    return type(interceptor).__module__.startswith("opentelemetry")
