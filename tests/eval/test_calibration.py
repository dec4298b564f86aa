from __future__ import annotations

from codesearch.eval.calibration import auroc, calibration
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
