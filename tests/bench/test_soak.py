"""bench/soak.py's summary: the figures the soak's pass/fail rule and its printout read (the run itself is in
tests/reliability)."""

from __future__ import annotations

from codesearch.bench.load import LoadResult, Sample
from codesearch.bench.soak import FuzzCall, SoakResult, format_summary


def _phase(latencies: list[float], errors: int) -> LoadResult:
    samples = [Sample("definition", ms, "OK") for ms in latencies]
    samples += [Sample("definition", 1.0, "DEADLINE_EXCEEDED") for _ in range(errors)]
    return LoadResult(clients=1, seconds=1.0, samples=samples)


def test_summary_counts_phases_statuses_and_overruns() -> None:
    result = SoakResult(
        baseline=_phase([10.0] * 99 + [20.0], errors=0),
        with_fuzz=_phase([10.0] * 98 + [40.0, 40.0], errors=2),
        deadline_ms=1000.0,
        fuzz=[
            FuzzCall("INVALID_ARGUMENT", 5.0, 50.0, 0.0),
            FuzzCall("OK", 80.0, 200.0, 0.0),
            FuzzCall("DEADLINE_EXCEEDED", 400.0, 200.0, 0.0),  # 200 ms past its deadline
        ],
    )
    s = result.summary()
    assert s["baseline"] == {"calls": 100, "p50_ms": 10.0, "p99_ms": 20.0, "errors": {}}
    assert s["with_fuzz"]["errors"] == {"DEADLINE_EXCEEDED": 2}
    assert s["with_fuzz"]["p99_ms"] == 40.0
    assert s["p99_ratio"] == 2.0
    assert s["fuzz_statuses"] == {"INVALID_ARGUMENT": 1, "OK": 1, "DEADLINE_EXCEEDED": 1}
    assert s["overruns_over_100ms"] == 1 and s["overruns_not_explained"] == 1
    assert s["worst_overrun_ms"] == 200.0
    text = format_summary(s)
    assert "well-behaved alone:     100 calls, p50 10.0 ms, p99 20.0 ms, errors {}" in text
    assert 'errors {"DEADLINE_EXCEEDED": 2}' in text
    assert "p99 with fuzz / without: 2.0" in text
