"""Admission control on every leg (issue 20): a bounded number of expensive calls at once, a bounded queue and a
fast RESOURCE_EXHAUSTED beyond it, while cheap calls to the same RPC answer at once. Real keyword, graph and
vector (static tier) legs on 127.0.0.1, behind the LegAdmission interceptor that `codesearch serve` installs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
from codesearch.common.admission import EXPENSIVE_CALLS, LegAdmission
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import (
    graph_pb2,
    graph_pb2_grpc,
    keyword_pb2,
    keyword_pb2_grpc,
    search_pb2,
    search_pb2_grpc,
    vector_pb2,
    vector_pb2_grpc,
)

from tests.fixture_types import CodeOf

REFUSED_WITHIN_S = 0.5  # a refusal is immediate: no work, no wait (loose for a busy 2-core machine)
WAIT_S = 10.0  # bound on the polls below


@pytest.fixture(scope="module")
def legs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    root = tmp_path_factory.mktemp("repo")
    for i in range(5):
        (root / f"mod_{i}.py").write_text(
            f"def load_{i}(path):\n    return open(path).read()\n\n\ndef save_{i}(path):\n    return load_{i}(path)\n"
        )
    home = tmp_path_factory.mktemp("home")
    settings = Settings.from_env({"CODESEARCH_HOME": str(home), "CODESEARCH_VECTOR_TIERS": "static"})
    # One slot and one place in the queue per leg, so that the test can fill both by hand.
    admission = LegAdmission(max_running=1, max_queued=1)
    services = ("keyword", "vector", "graph", "orchestrator")
    srv = ThreadedServer(registrars(settings, services), admission=admission).start()
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(srv.address))
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="repo"), timeout=300))
    yield srv
    srv.stop()


def _hold_the_slot(srv: ThreadedServer, service: str) -> Callable[[], None]:
    """Takes the gate's one running slot, as an expensive call in progress would; returns its release."""
    gate = srv.admission.gate(service)
    release = threading.Event()

    async def expensive_call_in_progress() -> None:
        async with gate.admit(True):
            await asyncio.to_thread(release.wait)

    held = srv.submit(expensive_call_in_progress())
    _until(lambda: gate.full)

    def done() -> None:
        release.set()
        held.result(timeout=WAIT_S)

    return done


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def _calls(channel: grpc.Channel) -> dict[str, tuple[str, Callable[[], object], Callable[[], object]]]:
    """Per leg: its service, an expensive call and a cheap call to the same RPC."""
    graph = graph_pb2_grpc.GraphServiceStub(channel)
    vector = vector_pb2_grpc.VectorServiceStub(channel)
    keyword = keyword_pb2_grpc.KeywordServiceStub(channel)
    return {
        "graph": (
            "codesearch.v1.GraphService",
            lambda: graph.Impact(graph_pb2.ImpactRequest(target="load_1", max_depth=10), timeout=WAIT_S),
            lambda: graph.Impact(graph_pb2.ImpactRequest(target="load_1"), timeout=WAIT_S),
        ),
        "vector": (
            "codesearch.v1.VectorService",
            lambda: vector.Embed(vector_pb2.EmbedRequest(texts=["read a file"] * 8), timeout=WAIT_S),
            lambda: vector.Embed(
                vector_pb2.EmbedRequest(texts=["read a file"], is_query=True), timeout=WAIT_S
            ),
        ),
        "keyword": (
            "codesearch.v1.KeywordService",
            lambda: keyword.Grep(
                keyword_pb2.GrepRequest(pattern=".", syntax=keyword_pb2.PATTERN_SYNTAX_REGEX), timeout=WAIT_S
            ),
            lambda: keyword.Grep(keyword_pb2.GrepRequest(pattern="load_1"), timeout=WAIT_S),
        ),
    }


@pytest.mark.parametrize("leg", ["graph", "vector", "keyword"])
def test_each_leg_runs_a_bounded_number_of_expensive_calls(
    legs: ThreadedServer, leg: str, code_of: CodeOf
) -> None:
    channel = grpc.insecure_channel(legs.address)
    service, expensive, cheap = _calls(channel)[leg]
    assert (
        code_of(cheap) == grpc.StatusCode.OK and code_of(expensive) == grpc.StatusCode.OK
    )  # both valid calls
    gate = legs.admission.gate(service)
    release = _hold_the_slot(legs, service)
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            queued = pool.submit(code_of, expensive)  # waits in the queue's one place
            _until(lambda: gate.waiting == 1)
            started = time.perf_counter()
            assert code_of(expensive) == grpc.StatusCode.RESOURCE_EXHAUSTED  # beyond the queue
            assert time.perf_counter() - started < REFUSED_WITHIN_S
            assert code_of(cheap) == grpc.StatusCode.OK  # a cheap call never waits behind them
            assert not queued.done()
            release()
            assert (
                queued.result(timeout=WAIT_S) == grpc.StatusCode.OK
            )  # the queued one runs when a slot frees
    finally:
        release()  # again, if an assertion failed before (a second release does nothing)
    assert gate.refused >= 1


def test_every_gated_rpc_exists() -> None:
    """The table names real methods (a renamed RPC would silently lose its gate)."""
    from codesearch.v1 import graph_pb2 as g
    from codesearch.v1 import keyword_pb2 as k
    from codesearch.v1 import vector_pb2 as v

    methods = {
        f"/{s.full_name}/{m.name}"
        for pb in (g, k, v)
        for s in pb.DESCRIPTOR.services_by_name.values()
        for m in s.methods
    }
    assert set(EXPENSIVE_CALLS) <= methods, set(EXPENSIVE_CALLS) - methods
