"""Hosts any set of codesearch services in one gRPC server: all of them (the embedded default) or one.

The orchestrator reaches every leg through its gRPC stub, so the same code runs embedded on a laptop and as
separate pods; in one process the unary calls run the hosted leg's handler and the server's interceptors without
the network (common/local_rpc.py), index-update streams go over this server's own address.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import logging
import signal

import grpc

from codesearch.common import security
from codesearch.common.admission import LegAdmission
from codesearch.common.aio_thread import Registrar
from codesearch.common.grpc_util import AioHealthServicer, DecodeGuard, add_health_and_reflection, set_serving
from codesearch.common.lifecycle import run_shutdown
from codesearch.common.local_rpc import serve_locally
from codesearch.common.metrics import setup_metrics
from codesearch.common.telemetry import server_interceptors, setup_tracing
from codesearch.config import MAX_MESSAGE_BYTES, Settings

log = logging.getLogger("codesearch.server")

ALL_SERVICES = ("keyword", "vector", "graph", "rerank", "orchestrator")
SHUTDOWN_GRACE_S = 10.0  # in-flight searches finish; an index run is cut and its old snapshot stays live
# Shutdown hooks (background workers) get this long after the grace; `codesearch serve` then exits whatever is
# still running, so SIGTERM always ends the process within SHUTDOWN_GRACE_S + this (tests/reliability).
SHUTDOWN_HOOKS_S = 1.5
SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    # Accept the clients' keepalive pings (every 30 s, see orchestrator/legs.py) instead of closing with GOAWAY.
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    # Clients reconnect every few minutes and so re-resolve DNS: pods an autoscaler adds get traffic.
    ("grpc.max_connection_age_ms", 300_000),
    # ...but a call in flight (an index run of a big repository streams for many minutes) may finish.
    ("grpc.max_connection_age_grace_ms", 3_600_000),
]


def _register_leg(name: str, server: grpc.aio.Server, settings: Settings, hosted: set[str]) -> list[str]:
    if name == "orchestrator":
        from codesearch.orchestrator.service import register as register_orchestrator

        return register_orchestrator(server, settings, hosted)
    module = importlib.import_module(f"codesearch.{name}.service")
    return list(module.register(server, settings))


async def _wire_leg_health(
    server: grpc.aio.Server, health: AioHealthServicer, services: tuple[str, ...]
) -> None:
    """A leg whose model is missing or still loading reports NOT_SERVING for its own service name."""
    if "rerank" in services:
        from codesearch.rerank.service import wire_health

        await wire_health(server, health)


def dial_address(listen_addr: str, port: int) -> str:
    """How this process reaches itself: a wildcard listen address is dialled on loopback."""
    host = listen_addr.rsplit(":", 1)[0]
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1"
    return f"{host}:{port}"


def registrars(settings: Settings, services: tuple[str, ...] = ALL_SERVICES) -> list[Registrar]:
    """Functions that add the given services, then health and reflection, to a server (for ThreadedServer)."""
    hosted = set(services)
    names: list[str] = []

    def add_services(server: grpc.aio.Server, address: str) -> None:
        local = dataclasses.replace(settings, listen_addr=address)
        for name in services:
            names.extend(_register_leg(name, server, local, hosted))

    async def add_health(server: grpc.aio.Server) -> None:
        health = add_health_and_reflection(server, names)
        await set_serving(health, ["", *names], True)
        await _wire_leg_health(server, health, services)

    return [add_services, add_health]


async def serve(settings: Settings, services: tuple[str, ...] = ALL_SERVICES) -> None:
    """Runs until SIGTERM or SIGINT, then drains: NOT_SERVING first, so load balancers stop sending."""
    process_name = f"codesearch-{'-'.join(services) if len(services) < len(ALL_SERVICES) else 'all'}"
    setup_tracing(process_name)
    setup_metrics(process_name)
    security.check_exposure(settings)
    interceptors = [
        *security.server_interceptors(settings),
        DecodeGuard(),
        LegAdmission(),  # a gate per leg for its expensive calls
        *server_interceptors(),
    ]
    server = grpc.aio.server(options=SERVER_OPTIONS, interceptors=interceptors)
    # The orchestrator calls the legs hosted here without the network (common/local_rpc.py).
    serve_locally(server, interceptors, MAX_MESSAGE_BYTES)
    port = security.add_port(server, settings, settings.listen_addr)
    if port == 0:
        raise OSError(f"cannot listen on {settings.listen_addr}")
    settings = dataclasses.replace(settings, listen_addr=dial_address(settings.listen_addr, port))
    hosted = set(services)
    names: list[str] = []
    for name in services:
        names.extend(_register_leg(name, server, settings, hosted))
    health = add_health_and_reflection(server, names)
    await server.start()
    await set_serving(health, ["", *names], True)
    await _wire_leg_health(server, health, services)
    log.info(
        "codesearch serving %s on %s (data in %s)", ", ".join(services), settings.listen_addr, settings.home
    )
    print(
        f"codesearch serving {', '.join(services)} on {settings.listen_addr} (data in {settings.home})",
        flush=True,
    )

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.remove_signal_handler(sig)  # a second signal ends the process at once (Python's default)
    log.info("draining: up to %.0f s for calls in flight", SHUTDOWN_GRACE_S)
    await set_serving(health, ["", *names], False)
    # Calls still running at the end of the grace are cancelled: their CancelTokens stop the native work.
    await server.stop(SHUTDOWN_GRACE_S)
    try:
        await asyncio.wait_for(asyncio.to_thread(run_shutdown, server), SHUTDOWN_HOOKS_S)
    except TimeoutError:
        log.warning("shutdown hooks still running after %.1f s; exiting without them", SHUTDOWN_HOOKS_S)
