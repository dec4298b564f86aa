"""OpenTelemetry: a tracer for codesearch spans, and exporters configured from the standard OTEL_* variables.

Spans are always created (the API is a no-op without an SDK provider); `setup_tracing` installs the SDK when
the environment asks for export: OTEL_TRACES_EXPORTER=otlp|console, or OTEL_EXPORTER_OTLP_ENDPOINT set.
The gRPC interceptors that carry a trace between processes are installed only where an SDK provider is: a
process that records no spans neither starts nor forwards a trace (they cost ~15% of the event loop's time per
search, every leg call passing through both a client and a server interceptor in one process).
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc
from opentelemetry import trace

from codesearch.config import telemetry_env

tracer = trace.get_tracer("codesearch")


def exporter_from_env(e: Mapping[str, str], variable: str) -> str:
    """The exporter the standard variables ask for ("otlp", "console"...), or "" for none.

    `variable` is OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER; an OTLP endpoint alone also means OTLP.
    """
    name = e.get(variable, "")
    if not name and e.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        name = "otlp"
    return "" if name == "none" else name


def setup_tracing(service_name: str, env: dict[str, str] | None = None) -> bool:
    """Installs an SDK tracer provider with the exporter the environment names. Returns True when installed."""
    e = telemetry_env() if env is None else env
    exporter_name = exporter_from_env(e, "OTEL_TRACES_EXPORTER")
    if not exporter_name:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider(
        resource=Resource.create({"service.name": e.get("OTEL_SERVICE_NAME", service_name)})
    )
    if exporter_name == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter())
        )  # endpoint etc. from OTEL_* variables
    trace.set_tracer_provider(provider)
    return True


def tracing_enabled() -> bool:
    """Whether an SDK tracer provider is installed (by `setup_tracing`, or by a test), so spans are recorded."""
    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """gRPC aio server interceptor that continues the caller's trace (health and reflection excluded); none when
    tracing is off."""
    if not tracing_enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    not_probes = filters.negate(
        filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection"))
    )
    return [aio_server_interceptor(filter_=not_probes)]


def client_interceptors() -> list[grpc.aio.ClientInterceptor]:
    """gRPC aio client interceptors that propagate the trace context to the legs; none when tracing is off."""
    if not tracing_enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return list(aio_client_interceptors())
