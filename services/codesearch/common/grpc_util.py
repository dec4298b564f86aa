"""Servicer plumbing: map ServiceError (and surprises) to gRPC statuses; health and reflection."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from codesearch.common import reflection
from codesearch.common.errors import ServiceError

log = logging.getLogger(__name__)
S = TypeVar("S")  # the servicer
Req = TypeVar("Req")  # the request message, or an iterator of them for a client stream
R = TypeVar("R")  # the response message
# Status messages are cut to this: a message echoing a 10,000-character name went past gRPC's metadata limit
# (8 KiB) and reached the client as RESOURCE_EXHAUSTED instead of its own status.
MAX_STATUS_MESSAGE_CHARS = 1000


def _message(text: str) -> str:
    if len(text) <= MAX_STATUS_MESSAGE_CHARS:
        return text
    return text[: MAX_STATUS_MESSAGE_CHARS - 20] + f"... ({len(text)} characters)"


def status_details(code: grpc.StatusCode, message: str, details: Iterable[Message]) -> Any:
    """Trailing metadata carrying a google.rpc.Status with `details` packed in (`rpc_status.from_call`
    reads it back on the client)."""
    packed = []
    for d in details:
        one = any_pb2.Any()
        one.Pack(d)
        packed.append(one)
    status = status_pb2.Status(code=code.value[0], message=message, details=packed)
    return rpc_status.to_status(status).trailing_metadata


async def abort(context: grpc.aio.ServicerContext, e: ServiceError) -> NoReturn:
    """Ends the call with `e`'s status; its details, if any, as rich status details."""
    message = _message(e.message)
    if not e.details:
        await context.abort(e.code, message)
    await context.abort(e.code, message, trailing_metadata=status_details(e.code, message, e.details))


def rpc(
    method: Callable[[S, Req, grpc.aio.ServicerContext], Awaitable[R]],
) -> Callable[[S, Req, grpc.aio.ServicerContext], Awaitable[R]]:
    """Wraps an async unary or client-streaming servicer method: ServiceError -> its status, else INTERNAL.

    For server-streaming (async generator) methods use `rpc_stream`.
    """

    @functools.wraps(method)
    async def wrapper(self: S, request: Req, context: grpc.aio.ServicerContext) -> R:
        try:
            return await method(self, request, context)
        except ServiceError as e:
            await abort(context, e)
        except (grpc.aio.AbortError, grpc.RpcError):
            raise
        except Exception as e:  # a bug: report it plainly, keep the server up
            log.exception("%s failed", method.__qualname__)
            await context.abort(grpc.StatusCode.INTERNAL, _message(f"{type(e).__name__}: {e}"))

    return wrapper


def rpc_stream(
    method: Callable[[S, Req, grpc.aio.ServicerContext], AsyncIterator[R]],
) -> Callable[[S, Req, grpc.aio.ServicerContext], AsyncIterator[R]]:
    """Like `rpc`, for async-generator (server-streaming) methods."""
    assert inspect.isasyncgenfunction(method)

    @functools.wraps(method)
    async def wrapper(self: S, request: Req, context: grpc.aio.ServicerContext) -> AsyncIterator[R]:
        try:
            async for item in method(self, request, context):
                yield item
        except ServiceError as e:
            await abort(context, e)
        except (grpc.aio.AbortError, grpc.RpcError):
            raise
        except Exception as e:
            log.exception("%s failed", method.__qualname__)
            await context.abort(grpc.StatusCode.INTERNAL, _message(f"{type(e).__name__}: {e}"))

    return wrapper


class AioHealthServicer(Protocol):
    """What is used here of grpc_health's asyncio HealthServicer (`health.aio`, which grpc-stubs 1.53 lacks)."""

    async def set(self, service: str, status: int) -> None: ...  # status: a HealthCheckResponse.ServingStatus


def add_health_and_reflection(
    server: grpc.aio.Server, service_full_names: Iterable[str]
) -> AioHealthServicer:
    """Registers grpc.health.v1 (overall and per service, all SERVING) and server reflection."""
    names = list(service_full_names)
    health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]  # grpc-stubs 1.53 lacks health.aio
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection([*names, health.SERVICE_NAME], server)
    return health_servicer


async def set_serving(
    health_servicer: AioHealthServicer,
    names: Iterable[str],
    serving: bool,
) -> None:
    status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
    for name in names:
        await health_servicer.set(name, status)


class _Undecodable:
    """Stands for a request message whose bytes did not parse (the handler answers INVALID_ARGUMENT)."""

    def __init__(self, error: Exception) -> None:
        self.message = f"the request is not a valid protobuf message: {error}"


def _parse_or_mark(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as e:
            return _Undecodable(e)

    return parse


class DecodeGuard(grpc.aio.ServerInterceptor):
    """Undecodable wire bytes are INVALID_ARGUMENT (gRPC itself answers UNKNOWN and logs a traceback)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler: Any = await continuation(handler_call_details)  # the aio handler: async behaviours
        if handler is None or handler.request_deserializer is None:
            return handler
        parse = _parse_or_mark(handler.request_deserializer)
        out = handler.response_serializer
        if handler.unary_unary is not None:
            unary = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if isinstance(request, _Undecodable):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
                return await unary(request, context)

            return grpc.unary_unary_rpc_method_handler(unary_unary, parse, out)
        if handler.unary_stream is not None:
            stream = handler.unary_stream

            async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if isinstance(request, _Undecodable):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
                async for item in stream(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(unary_stream, parse, out)
        if handler.stream_unary is not None:
            client_stream = handler.stream_unary

            async def checked(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
                async for request in requests:
                    if isinstance(request, _Undecodable):
                        raise ServiceError(grpc.StatusCode.INVALID_ARGUMENT, request.message)
                    yield request

            async def stream_unary(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
                return await client_stream(checked(requests), context)

            return grpc.stream_unary_rpc_method_handler(stream_unary, parse, out)
        return handler
