"""Runs a grpc.aio server on its own event loop in a background thread (tests, benchmarks, embedding)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import grpc

from codesearch.common.admission import LegAdmission
from codesearch.common.grpc_util import DecodeGuard
from codesearch.common.lifecycle import run_shutdown
from codesearch.common.local_rpc import serve_locally
from codesearch.common.telemetry import server_interceptors
from codesearch.config import MAX_MESSAGE_BYTES

T = TypeVar("T")

# A registrar adds services to a server; one that takes two arguments also gets the server's bound address.
Registrar = Callable[..., Awaitable[object] | object]


class ThreadedServer:
    """A real gRPC server on 127.0.0.1:<ephemeral port>, in a thread; `address` says where."""

    def __init__(
        self,
        registrars: list[Registrar],
        host: str = "127.0.0.1",
        port: int = 0,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
        credentials: grpc.ServerCredentials | None = None,
        admission: LegAdmission | None = None,
    ) -> None:
        self._registrars = registrars
        self._interceptors = list(interceptors)  # run before tracing: an unauthenticated call is not traced
        self._credentials = credentials  # TLS for the port; None is plaintext
        self._host = host
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="grpc-aio-server")
        self._server: grpc.aio.Server | None = None
        self.admission = admission or LegAdmission()  # the legs' gates, as `codesearch serve` installs them
        self.address = ""

    def start(self) -> ThreadedServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=120)
        return self

    async def _start(self) -> None:
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        interceptors = [*self._interceptors, DecodeGuard(), self.admission, *server_interceptors()]
        self._server = grpc.aio.server(options=options, interceptors=interceptors)
        serve_locally(self._server, interceptors, MAX_MESSAGE_BYTES)  # as `codesearch serve` does
        address = f"{self._host}:{self._port}"
        if self._credentials is None:
            port = self._server.add_insecure_port(address)
        else:
            port = self._server.add_secure_port(address, self._credentials)
        self.address = f"{self._host}:{port}"
        for register in self._registrars:
            wants_address = len(inspect.signature(register).parameters) == 2
            result = register(self._server, self.address) if wants_address else register(self._server)
            if asyncio.iscoroutine(result):
                await result
        await self._server.start()

    @property
    def grpc_server(self) -> grpc.aio.Server | None:
        """The running server (None before start and after stop)."""
        return self._server

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Starts a coroutine on the server's loop without waiting for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 600) -> T:
        """Runs a coroutine on the server's loop (for setup that must happen there)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=timeout)

    def stop(self) -> None:
        """Stops the server and its loop; a second call does nothing."""
        if not self._thread.is_alive():
            return
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(grace=1), self._loop).result(timeout=30)
            run_shutdown(self._server)
            self._server = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
