from __future__ import annotations

import pytest
from codesearch.common.telemetry import exporter_from_env


def test_exporters_follow_the_standard_variables() -> None:
    assert exporter_from_env({}, "OTEL_TRACES_EXPORTER") == ""
    assert (
        exporter_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, "OTEL_METRICS_EXPORTER") == "otlp"
    )
    assert exporter_from_env({"OTEL_TRACES_EXPORTER": "console"}, "OTEL_TRACES_EXPORTER") == "console"
    both = {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}
    assert exporter_from_env(both, "OTEL_TRACES_EXPORTER") == ""  # an explicit "none" wins


def test_trace_interceptors_only_where_spans_are_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an SDK provider the interceptors would carry no-op spans at ~15% of the event loop's time."""
    from codesearch.common import telemetry
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    monkeypatch.setattr(telemetry.trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    assert not telemetry.tracing_enabled()
    assert telemetry.server_interceptors() == [] and telemetry.client_interceptors() == []
    monkeypatch.setattr(telemetry.trace, "get_tracer_provider", lambda: TracerProvider())
    assert telemetry.tracing_enabled()
    assert len(telemetry.server_interceptors()) == 1 and telemetry.client_interceptors()
