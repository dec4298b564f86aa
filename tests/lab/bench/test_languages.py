"""`python -m codesearch_lab.bench.languages accuracy`'s scorer on the hand-written samples of tests/graph/accuracy:
the parser's definitions meet the targets in every language."""

from __future__ import annotations

from pathlib import Path

import pytest
from codesearch_lab.bench.languages import score_samples

SAMPLES = Path(__file__).resolve().parents[2] / "graph" / "accuracy"


@pytest.mark.parametrize("samples", [SAMPLES, SAMPLES / "heldout"], ids=["development", "heldout"])
def test_measured_accuracy_meets_the_targets(samples: Path) -> None:
    """Definitions P >= 0.95 and R >= 0.90 per language on the hand-written samples (bench/languages accuracy)."""
    for language, (defs, _calls) in score_samples(samples).items():
        assert defs.precision() >= 0.95 and defs.recall() >= 0.90, (language, defs)
