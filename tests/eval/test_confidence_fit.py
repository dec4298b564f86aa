"""The confidence refit: a standardised logistic model, unfolded to the raw units the server computes."""

from __future__ import annotations

import math
import random

import pytest
from codesearch.eval.confidence_fit import CANDIDATES, Answer, first_file, fit, grouped_cv, logit
from codesearch.orchestrator.ranking.fusion import fuse
from codesearch.v1 import common_pb2

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
    cv = grouped_cv(train, [], [0, 1])
    noise_only = grouped_cv(train, [], [1])
    assert cv is not None and noise_only is not None
    assert cv > 0.8 and noise_only < 0.7


def _hit(path: str, start: int) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=start + 9)
    return common_pb2.Hit(location=loc, score=1.0)


KEYWORD = [_hit("router.go", 1), _hit("tree.go", 1), _hit("mux.go", 1)]


def test_legs_agree_reads_each_legs_own_first_file() -> None:
    same = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.5, [_hit("router.go", 40)])], 40
    )
    # The vector leg's first hit is in another file than the keyword leg's, though it also found router.go.
    other = fuse(
        [
            (common_pb2.LEG_KEYWORD, 1.0, KEYWORD),
            (common_pb2.LEG_VECTOR, 0.5, [_hit("tree.go", 1), _hit("router.go", 40)]),
        ],
        40,
    )
    alone = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD)], 40)  # the direct path: nothing to disagree with
    assert first_file(other, common_pb2.LEG_VECTOR) == ("r", "tree.go")
    assert first_file(alone, common_pb2.LEG_VECTOR) is None
    assert CANDIDATES["legs_agree"](same) == CANDIDATES["legs_first_agree"](same) == 1.0
    assert CANDIDATES["legs_agree"](other) == CANDIDATES["legs_first_agree"](other) == 0.0
    assert CANDIDATES["legs_agree"](alone) == 1.0 and CANDIDATES["legs_first_agree"](alone) == 0.0
