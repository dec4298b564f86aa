from __future__ import annotations

import pytest
from codesearch.common.rank_fusion import rrf


def test_rrf_sums_weight_over_k_plus_rank_per_ranking() -> None:
    scores = rrf([["a", "b", "c"], ["c", "a"]], k=60.0, weights=[1.0, 0.5])
    assert scores["a"] == pytest.approx(1 / 61 + 0.5 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 0.5 / 61)


def test_rrf_weights_default_to_one_and_bad_k_is_refused() -> None:
    assert rrf([["x"], ["x"]], k=0.0) == {"x": pytest.approx(2.0)}
    with pytest.raises(ValueError):
        rrf([["x"]], k=-1.0)
