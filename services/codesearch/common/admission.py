"""Admission control: a bounded number of expensive calls at once, a bounded queue, a fast refusal beyond it.

Cheap calls never wait here, so one client's heavy queries cannot starve the others' cheap ones; a heavy call
beyond the queue is refused at once with RESOURCE_EXHAUSTED (retry later) instead of queueing without end.

Every leg gets one gate of its own through `LegAdmission`, a server interceptor installed where servers are
built (server.py, aio_thread.py); `EXPENSIVE_CALLS` says, per RPC, which requests are the expensive kind. The
orchestrator gates whole Search calls itself (orchestrator/admission.py), since what a Search costs depends on
its route.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc

from codesearch import _native
from codesearch.common.errors import ServiceError
from codesearch.v1 import keyword_pb2

# Expensive calls running at once per gate. Each is CPU-bound (a full scan, a long text, a rerank); two at a time
# leave the cheap calls a core on a 2-core machine. Measured with it: `codesearch bench soak --seconds 120` over
# click, the well-behaved clients' p99 was 1.87x their p99 without the fuzz (506.8 / 270.6 ms), 0 errors.
MAX_RUNNING = 2
# Expensive calls waiting for a slot per gate; beyond this a call is refused (it would wait past any deadline).
MAX_QUEUED = 8
# Longer than any question a person types (the longest of the 605 dev-set queries is 164 characters): a pasted
# text, whose many terms cost every leg more (BM25 terms, trigram conditions, embedding tokens, name parts).
LONG_TEXT_CHARS = 256
# More results than the orchestrator ever asks a leg for (plan.py's LEG_DEPTH, 50; the proto's defaults are
# 50-200): each result is a lookup, a snippet and a filter check.
BIG_LIMIT = 200
# Impact hops beyond the proto's default (3): each hop can multiply the dependents read.
DEEP_IMPACT = 3
# Locations per Centrality call beyond what a fan-out asks (it sends one page of hits, at most 200).
MANY_LOCATIONS = 200


class Gate:
    """One leg's (or the orchestrator's) admission for expensive calls."""

    def __init__(self, name: str, max_running: int = MAX_RUNNING, max_queued: int = MAX_QUEUED) -> None:
        self.name = name
        self.max_queued = max_queued
        self._slots = asyncio.Semaphore(max_running)
        self._waiting = 0
        self.refused = 0  # calls refused so far (for tests and stats)

    @property
    def full(self) -> bool:
        """Every slot is taken: the next expensive call waits (or is refused)."""
        return self._slots.locked()

    @property
    def waiting(self) -> int:
        """Expensive calls queued for a slot now."""
        return self._waiting

    @contextlib.asynccontextmanager
    async def admit(self, expensive: bool) -> AsyncIterator[None]:
        """Runs the body at once when cheap; when expensive, in a slot, after a bounded wait, or refuses."""
        if not expensive:
            yield
            return
        if self.full and self._waiting >= self.max_queued:
            self.refused += 1
            raise ServiceError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.name}: too many expensive queries at once ({self.max_queued} waiting); retry later",
            )
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._slots.release()


def full_scan(pattern: str, is_regex: bool, case_sensitive: bool) -> bool:
    """A trigram search whose pattern requires no trigram reads every file: the expensive kind. The planner
    answers in microseconds (bounded in the pattern's length); an invalid pattern is refused later, cheaply."""
    try:
        return not _native.requires_trigrams(pattern, is_regex, case_sensitive)
    except ValueError:
        return False


def _grep_scans_everything(r: Any) -> bool:
    regex = r.syntax == keyword_pb2.PATTERN_SYNTAX_REGEX
    return len(r.pattern) > LONG_TEXT_CHARS or full_scan(r.pattern, regex, r.case_sensitive)


def _long_name(name: str, limit: int) -> bool:
    return len(name) > LONG_TEXT_CHARS or limit > BIG_LIMIT


IsExpensive = Callable[[Any], bool]
# Per RPC (full method name): which requests are expensive. Each is CPU-bound work in a worker thread whose cost
# grows with what this reads; a call not listed, or a cheap request, is never gated.
EXPENSIVE_CALLS: Mapping[str, IsExpensive] = {
    "/codesearch.v1.KeywordService/Grep": _grep_scans_everything,
    "/codesearch.v1.KeywordService/KeywordSearch": lambda r: _long_name(r.query, r.limit),
    "/codesearch.v1.GraphService/FindDefinitions": lambda r: _long_name(r.name, r.limit),
    "/codesearch.v1.GraphService/FindReferences": lambda r: _long_name(r.name, r.limit),
    "/codesearch.v1.GraphService/FindCallees": lambda r: _long_name(r.name, r.limit),
    "/codesearch.v1.GraphService/Impact": lambda r: (
        _long_name(r.target, r.limit) or r.max_depth > DEEP_IMPACT
    ),
    "/codesearch.v1.GraphService/Centrality": lambda r: len(r.locations) > MANY_LOCATIONS,
    "/codesearch.v1.VectorService/VectorSearch": lambda r: _long_name(r.text, r.limit),
    "/codesearch.v1.VectorService/Embed": lambda r: (
        len(r.texts) > 1 or any(len(t) > LONG_TEXT_CHARS for t in r.texts)
    ),
}


class LegAdmission(grpc.aio.ServerInterceptor):
    """One Gate per service for the unary calls `expensive` lists. Install it after DecodeGuard, which answers
    undecodable bytes before a cost function would read them."""

    def __init__(
        self,
        expensive: Mapping[str, IsExpensive] = EXPENSIVE_CALLS,
        max_running: int = MAX_RUNNING,
        max_queued: int = MAX_QUEUED,
    ) -> None:
        self.expensive = dict(expensive)
        self.max_running = max_running
        self.max_queued = max_queued
        self.gates: dict[str, Gate] = {}  # by service name, made on the first call (in the server's loop)

    def gate(self, service: str) -> Gate:
        if service not in self.gates:
            self.gates[service] = Gate(service.rsplit(".", 1)[-1], self.max_running, self.max_queued)
        return self.gates[service]

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler: Any = await continuation(handler_call_details)  # the aio handler: async behaviours
        method = handler_call_details.method
        is_expensive = self.expensive.get(method)
        if handler is None or is_expensive is None or handler.unary_unary is None:
            return handler
        gate = self.gate(method.split("/")[1])
        unary = handler.unary_unary

        async def admitted(request: Any, context: grpc.aio.ServicerContext) -> Any:
            try:
                expensive = is_expensive(request)
            except Exception:  # a request the handler will refuse (bad fields): let it say why
                expensive = False
            try:
                async with gate.admit(expensive):
                    return await unary(request, context)
            except ServiceError as e:  # the refusal (the handler maps its own errors itself)
                await context.abort(e.code, e.message)

        return grpc.unary_unary_rpc_method_handler(
            admitted, handler.request_deserializer, handler.response_serializer
        )
