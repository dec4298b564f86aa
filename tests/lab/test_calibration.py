"""codesearch_lab/calibration.py: the two-number map it fits, and the grouped folds it scores it in."""

from __future__ import annotations

import random

from codesearch.eval.calibration import expected_calibration_error
from codesearch_lab.calibration import Answer, fit_platt, held_out_confidences, logit, sigmoid


def test_platt_fit_recovers_a_known_map() -> None:
    rng = random.Random(0)
    logits = [rng.uniform(-3, 3) for _ in range(4000)]
    right = [rng.random() < sigmoid(0.7 * z + 1.5) for z in logits]
    scale, shift = fit_platt(logits, right)
    assert abs(scale - 0.7) < 0.1 and abs(shift - 1.5) < 0.15


def test_held_out_folds_calibrate_an_under_promising_model() -> None:
    # A model that says 0.3 where 80% are right, on 10 repositories: each fold's map, fitted without it, fixes it.
    rng = random.Random(1)
    rows = []
    for r in range(10):
        for _ in range(60):
            p = rng.uniform(0.1, 0.5)
            rows.append(Answer(f"repo{r}", "semantic", True, p, logit(p), rng.random() < min(1.0, p + 0.5)))
    rows.append(Answer("repo0", "symbol", False, 0.99, logit(0.99), True))  # not a meaning answer: kept
    before = expected_calibration_error([(a.confidence, a.right) for a in rows])
    after = held_out_confidences(rows, {f"repo{r}": ("go" if r % 2 else "python") for r in range(10)})
    assert before is not None and before > 0.4
    ece = expected_calibration_error(list(zip(after, [a.right for a in rows], strict=True)))
    assert ece is not None and ece < 0.06
    assert after[-1] == 0.99
