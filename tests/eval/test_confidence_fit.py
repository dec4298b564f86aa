"""The confidence refit: a standardised logistic model, unfolded to the raw units the server computes."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from codesearch.eval.calibration import auroc
from codesearch.eval.confidence_fit import (
    Answer,
    Population,
    ceiling,
    fit,
    grouped_cv,
    logit,
    one_model,
    population_auroc,
    sentence_model,
    write_model,
)
from codesearch.orchestrator.ranking import confidence
from codesearch.orchestrator.ranking.confidence import CONF_BIAS, CONF_WEIGHTS, FEATURES

pytest.importorskip("sklearn")


def answers(seed: int, repos: int = 4, per_repo: int = 40) -> list[Answer]:
    """Feature 0 decides rightness (on a large scale), feature 1 is noise: the model must weigh them so."""
    rng = random.Random(seed)
    out = []
    for r in range(repos):
        for _ in range(per_repo):
            signal, noise = rng.uniform(0, 100), rng.uniform(0, 1)
            right = rng.random() < 1 / (1 + math.exp(-(signal - 50) / 10))
            out.append(Answer([signal, noise], right, f"repo{r}", "fit"))
    return out


def test_fit_unfolds_to_raw_units_and_cv_holds_out_whole_repositories() -> None:
    train = answers(0)
    bias, weights = fit(train, [0, 1])
    # In raw units the decisive feature's boundary sits where the data put it (50), not at the scaler's origin.
    assert -bias / weights[0] == pytest.approx(50, abs=8)
    assert abs(weights[1] * 1.0) < abs(weights[0] * 100) / 10  # the noise feature's whole range weighs little
    assert logit(bias, weights, [90.0, 0.5], [0, 1]) > 0 > logit(bias, weights, [10.0, 0.5], [0, 1])
    cv = grouped_cv(train, [], one_model([0, 1]))
    noise_only = grouped_cv(train, [], one_model([1]))
    assert cv is not None and noise_only is not None
    assert cv > 0.8 and noise_only < 0.7


def test_ceiling_bounds_any_refit_in_sample_and_says_when_features_hold_nothing() -> None:
    """The ceiling is fitted on the rows it scores: a decisive feature reaches near 1, noise stays near 0.5 (so a
    goal above it needs another signal), and rows of one label have no ceiling."""
    rows = answers(2)
    decisive = ceiling(rows, [0])
    noise = ceiling(rows, [1])
    assert decisive is not None and noise is not None
    labels = [a.right for a in rows]
    decisive_auroc = auroc([decisive(a) for a in rows], labels)
    noise_auroc = auroc([noise(a) for a in rows], labels)
    assert decisive_auroc is not None and decisive_auroc > 0.9
    assert noise_auroc is not None and noise_auroc < 0.65
    # In-sample it is at least what a model fitted elsewhere reaches on these rows.
    elsewhere = one_model([0, 1])(answers(3))
    elsewhere_auroc = auroc([elsewhere(a) for a in rows], labels)
    assert elsewhere_auroc is not None and decisive_auroc >= elsewhere_auroc - 0.02
    assert ceiling([a for a in rows if a.right], [0]) is None


def _answer(x: list[float], right: bool, sentence: bool, group: str = "g") -> Answer:
    return Answer(x, right, group, "fit", sentence=sentence)


def test_sentence_model_keeps_names_on_the_shipped_model_and_caps_sentences() -> None:
    rng = random.Random(1)
    n = len(FEATURES)
    train = []
    for i in range(120):
        margin = rng.random()
        x = [margin] + [rng.random() for _ in range(n - 1)]
        train.append(_answer(x, rng.random() < margin, sentence=True, group=f"r{i % 4}"))
    name = _answer([1.0, 1.0, 1.0, 0.0, 0.0, 1 / 12, 0.0][:n], True, sentence=False)
    model = sentence_model(list(range(n)), cap=0.9)(train)
    shipped = 1 / (1 + math.exp(-logit(CONF_BIAS, CONF_WEIGHTS, name.x, list(range(n)))))
    assert model(name) == pytest.approx(shipped)
    assert max(model(a) for a in train) <= 0.9
    assert model(_answer([1.0] + [0.5] * (n - 1), True, True)) > model(
        _answer([0.0] + [0.5] * (n - 1), True, True)
    )


def test_population_mixes_the_refit_with_the_runs_other_answers() -> None:
    """A set's AUROC as the server answers it: a refit that rates its wrong answer above the exact-leg model's
    right ones is caught here, not in the signal-ranked answers alone."""
    wrong = _answer([0.0], False, True)
    right = _answer([1.0], True, True)
    others = [(0.9, True, "tune"), (0.95, True, "tune")]
    modest = Population("dev", [wrong, right], others, True)
    assert population_auroc(modest, lambda a: 0.5 + 0.49 * a.x[0]) == 1.0
    assert population_auroc(modest, lambda a: 0.97 + 0.02 * a.x[0]) == pytest.approx(1 / 3)


def test_write_model_replaces_the_shipped_numbers(tmp_path: Path) -> None:
    target = tmp_path / "confidence.py"
    target.write_text(Path(confidence.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    weights = [0.5 + i for i in range(len(FEATURES))]
    write_model(str(target), -1.25, weights, 0.91)
    namespace: dict[str, object] = {}
    exec(compile(target.read_text(encoding="utf-8"), str(target), "exec"), namespace)
    assert namespace["SENTENCE_BIAS"] == -1.25
    assert namespace["SENTENCE_WEIGHTS"] == tuple(weights)
    assert namespace["SENTENCE_CAP"] == 0.91
    # The names' model is left as it is.
    assert namespace["CONF_BIAS"] == CONF_BIAS and namespace["CONF_WEIGHTS"] == CONF_WEIGHTS
    assert namespace["FEATURES"] == FEATURES
    other = tmp_path / "other.py"
    other.write_text("BIAS = 1.0\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not found"):
        # A file without the model's lines is refused, not half-written.
        write_model(str(other), 0.0, weights, 0.9)
    assert other.read_text(encoding="utf-8") == "BIAS = 1.0\n"
