"""`python -m codesearch_lab.bench.latency_hop` on a tiny corpus: both ways measured, their ratio printed, and the
direct call answers the same bytes as the call through gRPC."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codesearch_lab.bench import latency_hop


def test_the_hop_is_measured_against_the_direct_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "retry.py").write_text(
        '"""Retries spaced out by a growing delay."""\n\n\ndef retry(fn, attempts=3):\n'
        '    """Calls fn until it succeeds, waiting longer between retries."""\n    return fn()\n'
    )
    (corpus / "config.py").write_text('def parse(path):\n    """Parse the configuration file."""\n')
    assert latency_hop.main(["--corpus", str(corpus), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{len(latency_hop.DEFAULT_QUERIES)} calls each way" in out
    for way in ("through gRPC", "LocalChannel", "direct"):
        m = re.search(rf"^{way}\s+([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)\s+([\d.]+)", out, re.M)
        assert m and float(m[1]) > 0 and float(m[4]) >= 0, out
        if way == "direct":
            assert float(m[2]) == 1.0  # the baseline of the ratios
    assert "same answer bytes every way: 3 of 3" in out
