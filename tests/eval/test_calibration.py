from __future__ import annotations

import pytest
from codesearch.eval.calibration import auroc, calibration, expected_calibration_error
from codesearch.eval.runfile import Query


def test_auroc_perfect_inverted_and_tied() -> None:
    assert auroc([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 1.0
    assert auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc([0.5, 0.6], [True, True]) is None


def test_calibration_bins_hit_at_1_by_confidence() -> None:
    gold = [{"path": "a.py", "line": 10, "end_line": 10}]
    queries = [
        Query(id=f"q{i}", klass="definition", variant="bare", query="x", gold=gold, notes={})
        for i in range(4)
    ]
    right = {"path": "a.py", "line": 10, "end_line": 12, "score": 1.0}
    wrong = {"path": "b.py", "line": 1, "end_line": 2, "score": 1.0}
    runs = {
        "q0": {"id": "q0", "results": [right], "confidence": 0.97},
        "q1": {"id": "q1", "results": [right], "confidence": 0.9},
        "q2": {"id": "q2", "results": [wrong], "confidence": 0.3},
        "q3": {"id": "q3", "results": [wrong], "confidence": 0.6},
    }
    cal = calibration(queries, runs)
    assert cal is not None and cal["auroc"] == 1.0 and cal["n"] == 4
    by_from = {b["from"]: b for b in cal["bins"]}
    assert by_from[0.95]["hit1"] == 1.0 and by_from[0.0]["hit1"] == 0.0


def test_expected_calibration_error_is_the_gap_between_confidence_and_hit_rate() -> None:
    # Calibrated: 0.9 right 9 times in 10, 0.2 right 1 time in 5.
    calibrated = [(0.9, i < 9) for i in range(10)] + [(0.2, i < 1) for i in range(5)]
    assert expected_calibration_error(calibrated) == pytest.approx(0.0)
    # Under-confident: 0.3 where 8 of 10 are right: the gap is 0.5 over every answer.
    assert expected_calibration_error([(0.3, i < 8) for i in range(10)]) == pytest.approx(0.5)
    assert expected_calibration_error([(1.0, True)]) == pytest.approx(0.0)  # 1.0 falls in the last bin
    assert expected_calibration_error([]) is None
