"""One trace per query across two real processes, a span per leg, and metrics for searches and legs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from codesearch.common.health_check import free_port, wait_healthy
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.fixture_types import StartServer

_SPANS = InMemorySpanExporter()
_METRICS = InMemoryMetricReader()
SERVER_START_TIMEOUT_S = 120  # the leg process imports grpc, tantivy and the Rust module on a busy machine


@pytest.fixture(scope="module", autouse=True)
def sdk_providers() -> Iterator[None]:
    """The SDK providers of this test process (global: set once; other tests are unaffected by recording)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_SPANS))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[_METRICS]))
    yield


def test_one_trace_across_processes_with_a_span_per_leg(tmp_path: Path, start_server: StartServer) -> None:
    keyword_addr = f"127.0.0.1:{free_port()}"
    env = dict(os.environ, CODESEARCH_HOME=str(tmp_path / "kw"), OTEL_TRACES_EXPORTER="console")
    leg = subprocess.Popen(
        [sys.executable, "-m", "codesearch.cli.main", "serve", "keyword", "--listen", keyword_addr],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_healthy(keyword_addr, SERVER_START_TIMEOUT_S, proc=leg)
        settings = Settings.from_env(
            {"CODESEARCH_HOME": str(tmp_path / "front"), "CODESEARCH_KEYWORD_ADDR": keyword_addr}
        )
        server = start_server(registrars(settings, ("graph", "orchestrator")))
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "retry.py").write_text(
            "def retry_with_backoff(fn):\n    return fn()\n\n\ndef main():\n    retry_with_backoff(print)\n"
        )
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="repo")))
        _SPANS.clear()
        resp = stub.Search(
            search_pb2.SearchRequest(query="how does the retry with backoff work", no_cache=True)
        )
        assert resp.hits
    finally:
        leg.terminate()
        out, _ = leg.communicate(timeout=60)

    spans = _SPANS.get_finished_spans()
    by_name = {s.name: s for s in spans}
    search = by_name["search"]
    trace_id = search.context.trace_id
    for name in ("route", "fuse", "rerank", "topk", "leg.keyword", "leg.vector"):
        assert name in by_name, sorted(by_name)
        assert by_name[name].context.trace_id == trace_id
        assert by_name[name].parent is not None
    leg_attributes = by_name["leg.keyword"].attributes
    assert leg_attributes is not None
    assert leg_attributes["leg"] == "keyword" and leg_attributes["degraded"] is False
    hits = leg_attributes["hits"]
    assert isinstance(hits, int) and hits >= 1
    vector_attributes = by_name["leg.vector"].attributes
    assert vector_attributes is not None
    assert vector_attributes["status"] == "LEG_STATUS_SKIPPED"  # not configured here

    # The keyword leg ran in the other process: its server span carries the same trace id.
    remote = [json.loads(chunk) for chunk in _json_objects(out)]
    keyword_calls = [s for s in remote if "KeywordService" in s.get("name", "")]
    assert keyword_calls, [s.get("name") for s in remote]
    assert any(int(s["context"]["trace_id"], 16) == trace_id for s in keyword_calls)

    # Metrics: search latency and per-leg latency were recorded.
    data = _METRICS.get_metrics_data()
    assert data is not None
    names = {m.name for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert {"codesearch.search.duration", "codesearch.leg.duration", "codesearch.index.files"} <= names


def _json_objects(text: str) -> Iterator[str]:
    """The top-level JSON objects the console exporter printed, one after another."""
    depth, start = 0, -1
    in_str = escape = False
    for i, ch in enumerate(text):
        if in_str:
            escape = not escape and ch == "\\"
            if ch == '"' and not escape:
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                yield text[start : i + 1]
