from __future__ import annotations

from codesearch.common.telemetry import exporter_from_env


def test_exporters_follow_the_standard_variables() -> None:
    assert exporter_from_env({}, "OTEL_TRACES_EXPORTER") == ""
    assert (
        exporter_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, "OTEL_METRICS_EXPORTER") == "otlp"
    )
    assert exporter_from_env({"OTEL_TRACES_EXPORTER": "console"}, "OTEL_TRACES_EXPORTER") == "console"
    both = {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}
    assert exporter_from_env(both, "OTEL_TRACES_EXPORTER") == ""  # an explicit "none" wins
