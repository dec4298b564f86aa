"""codesearch_lab/calibration.py: the sentence model it fits, and the grouped folds it scores it in."""

from __future__ import annotations

import random

from codesearch.eval.calibration import auroc, expected_calibration_error
from codesearch.orchestrator.ranking import confidence
from codesearch_lab.calibration import Answer, fit, held_out_confidences, paired_auroc


def answers(seed: int) -> list[Answer]:
    """10 repositories whose sentence answers are right more often the higher their keyword_rank; a shipped model
    that says 0.5 for all of them."""
    rng = random.Random(seed)
    i_rank = confidence.FEATURES.index("keyword_rank")
    rows = []
    for r in range(10):
        for _ in range(60):
            x = [rng.random() for _ in confidence.FEATURES]
            right = rng.random() < 0.1 + 0.8 * x[i_rank]
            rows.append(Answer(f"repo{r}", "semantic", True, 0.5, x, right))
    name = Answer("repo0", "symbol", False, 0.99, [0.0] * len(confidence.FEATURES), True)  # kept as shipped
    rows.append(name)
    return rows


def test_held_out_folds_learn_what_the_features_say() -> None:
    rows = answers(0)
    after = held_out_confidences(rows, {f"repo{r}": ("go" if r % 2 else "python") for r in range(10)})
    right = [a.right for a in rows]
    assert auroc([a.shipped for a in rows[:-1]], right[:-1]) == 0.5  # a flat model ranks nothing
    held_out = auroc(after, right)
    assert held_out is not None and held_out > 0.75
    ece = expected_calibration_error(list(zip(after, right, strict=True)))
    assert ece is not None and ece < 0.06
    assert after[-1] == 0.99
    assert paired_auroc(rows, [a.shipped for a in rows], after).startswith("+0.")


def test_the_fit_on_every_repository_gives_one_weight_per_feature() -> None:
    model = fit([a for a in answers(1) if a.sentence])
    weights = list(model.coef_[0])
    assert len(weights) == len(confidence.FEATURES)
    assert max(weights) == weights[confidence.FEATURES.index("keyword_rank")]
