"""Servicer plumbing: map ServiceError (and surprises) to gRPC statuses; health and reflection."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from codesearch.common.errors import ServiceError

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
# Status messages are cut to this: a message echoing a 10,000-character name went past gRPC's metadata limit
# (8 KiB) and reached the client as RESOURCE_EXHAUSTED instead of its own status.
MAX_STATUS_MESSAGE_CHARS = 1000


def _message(text: str) -> str:
    if len(text) <= MAX_STATUS_MESSAGE_CHARS:
        return text
    return text[: MAX_STATUS_MESSAGE_CHARS - 20] + f"... ({len(text)} characters)"


def rpc(method: F) -> F:
    """Wraps an async unary or client-streaming servicer method: ServiceError -> its status, else INTERNAL.

    For server-streaming (async generator) methods use `rpc_stream`.
    """

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except ServiceError as e:
            await context.abort(e.code, _message(e.message))
        except (grpc.aio.AbortError, grpc.RpcError):
            raise
        except Exception as e:  # a bug: report it plainly, keep the server up
            log.exception("%s failed", method.__qualname__)
            await context.abort(grpc.StatusCode.INTERNAL, _message(f"{type(e).__name__}: {e}"))

    return wrapper  # type: ignore[return-value]


def rpc_stream(method: F) -> F:
    """Like `rpc`, for async-generator (server-streaming) methods."""
    assert inspect.isasyncgenfunction(method)

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            async for item in method(self, request, context):
                yield item
        except ServiceError as e:
            await context.abort(e.code, _message(e.message))
        except (grpc.aio.AbortError, grpc.RpcError):
            raise
        except Exception as e:
            log.exception("%s failed", method.__qualname__)
            await context.abort(grpc.StatusCode.INTERNAL, _message(f"{type(e).__name__}: {e}"))

    return wrapper  # type: ignore[return-value]


def add_health_and_reflection(
    server: grpc.aio.Server, service_full_names: Iterable[str]
) -> health.aio.HealthServicer:
    """Registers grpc.health.v1 (overall and per service, all SERVING) and server reflection."""
    names = list(service_full_names)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection([*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    return health_servicer


async def set_serving(
    health_servicer: health.aio.HealthServicer, names: Iterable[str], serving: bool
) -> None:
    status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
    for name in names:
        await health_servicer.set(name, status)
