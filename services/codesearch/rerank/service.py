"""RerankService: scores candidates with a cross-encoder; the model loads in a background thread.

Status for health checks: `RerankServicer.available` / `.unavailable_reason` / `.loading`, and
`add_status_listener(cb)` (cb(available, reason) runs on the server's event loop once loading ends).
`servicer_for(server)` returns the servicer `register` added to a server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable

import grpc

from codesearch.common.errors import MODEL_LOADING, check_query, failed_precondition, invalid, unavailable
from codesearch.common.grpc_util import AioHealthServicer, rpc, set_serving
from codesearch.config import MAX_QUERY_CHARS, Settings
from codesearch.rerank.model import DEFAULT_MAX_LENGTH, Candidate, Reranker, resolve_model
from codesearch.v1 import rerank_pb2, rerank_pb2_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = rerank_pb2.DESCRIPTOR.services_by_name["RerankService"].full_name
MAX_CANDIDATES = 200  # the API's documented bound; ~10 s of CPU at 128 tokens, more is a batch job
MAX_CANDIDATE_CHARS = 1 << 20  # one indexed file at most; larger is not a candidate but a mistake
LOAD_WAIT_S = 120.0  # a request that arrives while the model loads waits this long (loading takes ~5-15 s)

StatusListener = Callable[[bool, str], Awaitable[None] | None]
_SERVICERS: weakref.WeakKeyDictionary[grpc.aio.Server, RerankServicer] = weakref.WeakKeyDictionary()


class RerankServicer(rerank_pb2_grpc.RerankServiceServicer):
    def __init__(self, settings: Settings, load_now: bool = True) -> None:
        self.settings = settings
        self.model_name, reason = resolve_model(settings)
        self.reranker: Reranker | None = None
        self.available = False
        self.unavailable_reason = reason or MODEL_LOADING
        self.loading = not reason
        self._listeners: list[StatusListener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loaded: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._score_lock = threading.Lock()  # torch already uses every core; concurrent batches only thrash
        if reason:
            self._loaded.set_result(None)
        elif load_now:
            self.start_loading()

    def start_loading(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        threading.Thread(target=self._load, name="rerank-model-load", daemon=True).start()

    def _load(self) -> None:
        try:
            self.reranker = Reranker(
                self.model_name,
                threads=self.settings.torch_threads,
                backend=self.settings.rerank_backend,
                cache_dirs=(self.settings.model_cache, self.settings.service_dir("rerank") / "model-cache"),
            )
            self.available, self.unavailable_reason = True, ""
            log.info(
                "reranker %s loaded (%s backend, max_length %d)",
                self.model_name,
                self.reranker.backend,
                self.reranker.max_length,
            )
        except Exception as e:  # any failure to load means "not available", with the reason, not a crash
            self.available = False
            self.unavailable_reason = (
                f"cannot load reranker model {self.model_name!r}: {type(e).__name__}: {e}"
            )
            log.warning("%s", self.unavailable_reason)
        finally:
            self.loading = False
            self._loaded.set_result(None)
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._notify)

    def add_status_listener(self, listener: StatusListener) -> None:
        """Calls listener(available, reason) on the event loop when loading ends (now, if it already has)."""
        self._listeners.append(listener)
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if self._loaded.done() and self._loop is not None:
            self._loop.call_soon_threadsafe(self._notify_one, listener)

    def _notify(self) -> None:
        for listener in self._listeners:
            self._notify_one(listener)

    def _notify_one(self, listener: StatusListener) -> None:
        result = listener(self.available, self.unavailable_reason)
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)

    async def wait_loaded(self, timeout: float = LOAD_WAIT_S) -> bool:
        await asyncio.wait_for(asyncio.wrap_future(self._loaded), timeout)
        return self.available

    @rpc
    async def GetRerankerInfo(
        self, request: rerank_pb2.GetRerankerInfoRequest, context: grpc.aio.ServicerContext
    ) -> rerank_pb2.GetRerankerInfoResponse:
        max_length = self.reranker.max_length if self.reranker is not None else DEFAULT_MAX_LENGTH
        return rerank_pb2.GetRerankerInfoResponse(
            model=self.model_name,
            available=self.available,
            unavailable_reason=self.unavailable_reason,
            max_length=max_length,
        )

    @rpc
    async def Rerank(
        self, request: rerank_pb2.RerankRequest, context: grpc.aio.ServicerContext
    ) -> rerank_pb2.RerankResponse:
        query = check_query(request.query, MAX_QUERY_CHARS)
        n = len(request.candidates)
        if n == 0:
            raise invalid("no candidates to rerank")
        if n > MAX_CANDIDATES:
            raise invalid(f"{n} candidates; the limit is {MAX_CANDIDATES}")
        if request.top_n < 0:
            raise invalid(f"top_n must be >= 0, got {request.top_n}")
        candidates = []
        for i, c in enumerate(request.candidates):
            if len(c.text) > MAX_CANDIDATE_CHARS:
                raise invalid(
                    f"candidate {i} is {len(c.text)} characters; the limit is {MAX_CANDIDATE_CHARS}"
                )
            candidates.append(Candidate(c.text, c.path, list(c.breadcrumb), list(c.focus_lines)))
        if self.loading:
            try:
                await self.wait_loaded()
            except TimeoutError as e:
                raise unavailable(f"reranker model {self.model_name!r} is still loading") from e
        reranker = self.reranker
        if reranker is None:
            raise failed_precondition(self.unavailable_reason)

        def score() -> list[float]:
            with self._score_lock:
                return reranker.score(query, candidates).tolist()

        scores = await asyncio.to_thread(score)
        order = sorted(range(n), key=lambda i: (-scores[i], i))
        if request.top_n:
            order = order[: request.top_n]
        return rerank_pb2.RerankResponse(
            scores=[
                rerank_pb2.RerankScore(id=request.candidates[i].id, index=i, score=scores[i]) for i in order
            ],
            model=self.model_name,
        )


async def wire_health(server: grpc.aio.Server, health_servicer: AioHealthServicer) -> None:
    """Keeps the health status of RerankService in step with the model: NOT_SERVING until it loads."""
    servicer = servicer_for(server)
    if servicer is None:
        return

    async def update(available: bool, reason: str) -> None:
        await set_serving(health_servicer, [SERVICE_NAME], available)

    await update(servicer.available, servicer.unavailable_reason)
    servicer.add_status_listener(update)


def servicer_for(server: grpc.aio.Server) -> RerankServicer | None:
    """The RerankServicer `register` added to this server (for health: available / add_status_listener)."""
    return _SERVICERS.get(server)


def register(server: grpc.aio.Server, settings: Settings) -> list[str]:
    servicer = RerankServicer(settings)
    rerank_pb2_grpc.add_RerankServiceServicer_to_server(servicer, server)
    _SERVICERS[server] = servicer
    return [SERVICE_NAME]
