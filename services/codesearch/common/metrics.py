"""OpenTelemetry metrics: request and per-leg latency, degraded legs, cache hits, indexing progress.

Instruments are always created (no-ops without an SDK provider); `setup_metrics` installs the SDK when the
environment asks for export: OTEL_METRICS_EXPORTER=otlp|console, or OTEL_EXPORTER_OTLP_ENDPOINT set.
"""

from __future__ import annotations

from opentelemetry import metrics

from codesearch.common.telemetry import exporter_from_env
from codesearch.config import telemetry_env

EXPORT_INTERVAL_MS = 15_000  # a scrape-like cadence; cheap enough to leave on

meter = metrics.get_meter("codesearch")
search_duration = meter.create_histogram(
    "codesearch.search.duration", unit="ms", description="Search RPC latency, by intent and strategy"
)
leg_duration = meter.create_histogram(
    "codesearch.leg.duration",
    unit="ms",
    description="Latency of one retrieval leg in one search, by leg and status",
)
leg_degraded = meter.create_counter(
    "codesearch.leg.degraded", description="Legs that failed or timed out while the others answered, by leg"
)
cache_lookups = meter.create_counter(
    "codesearch.cache.lookups", description="Query cache lookups, by result (hit/miss)"
)
files_indexed = meter.create_counter(
    "codesearch.index.files", description="Files processed by index runs, by repository and outcome"
)
index_runs = meter.create_counter("codesearch.index.runs", description="Index runs finished, by repository")


def setup_metrics(service_name: str, env: dict[str, str] | None = None) -> bool:
    """Installs an SDK meter provider with the exporter the environment names. Returns True when installed."""
    e = telemetry_env() if env is None else env
    exporter_name = exporter_from_env(e, "OTEL_METRICS_EXPORTER")
    if not exporter_name:
        return False
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricExporter,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.resources import Resource

    if exporter_name == "console":
        exporter: MetricExporter = ConsoleMetricExporter()
    else:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        exporter = OTLPMetricExporter()  # endpoint etc. from OTEL_* variables
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=EXPORT_INTERVAL_MS)
    resource = Resource.create({"service.name": e.get("OTEL_SERVICE_NAME", service_name)})
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    return True
