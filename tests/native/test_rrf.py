"""Native weighted RRF (fuse and fuse_compact) equals the pure-Python references (ids, order, scores, ranks)."""

from __future__ import annotations

import math
from array import array

import pytest
from codesearch._native import fuse, fuse_compact
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.native.rrf_reference import fuse_compact_reference, fuse_reference

# Small id alphabets make ids repeat across and within lists, which is where fusion can go wrong.
ids = st.text(alphabet="abcdeé_1", min_size=0, max_size=3)
lists_and_weights = st.integers(min_value=0, max_value=5).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(ids, max_size=30), min_size=n, max_size=n),
        st.lists(
            st.one_of(st.just(0.0), st.just(1.0), st.floats(min_value=0, max_value=10, allow_nan=False)),
            min_size=n,
            max_size=n,
        ),
    )
)
ks = st.one_of(st.just(0.0), st.just(60.0), st.floats(min_value=0, max_value=1000, allow_nan=False))


@settings(max_examples=400, deadline=None)
@given(lists_and_weights, ks)
def test_native_equals_reference(lw: tuple[list[list[str]], list[float]], k: float) -> None:
    lists, weights = lw
    got = fuse(lists, weights, k)
    want = fuse_reference(lists, weights, k)
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [g[2] for g in got] == [w[2] for w in want]
    for g, w in zip(got, want, strict=True):
        assert math.isclose(g[1], w[1], rel_tol=0, abs_tol=1e-12)

    got_ids, got_scores, got_ranks = fuse_compact(lists, weights, k)
    want_ids, want_scores, want_ranks = fuse_compact_reference(lists, weights, k)
    assert got_ids == want_ids == [w[0] for w in want]
    assert got_ranks == want_ranks
    assert len(got_ranks) == 4 * len(got_ids) * len(lists)
    assert got_scores == [g[1] for g in got]
    for got_score, want_score in zip(got_scores, want_scores, strict=True):
        assert math.isclose(got_score, want_score, rel_tol=0, abs_tol=1e-12)


def test_known_values() -> None:
    got = fuse([["a", "b", "c"], ["c", "a"]], [1.0, 2.0], 60.0)
    assert [g[0] for g in got] == ["c", "a", "b"]
    assert got[0][1] == pytest.approx(1 / 63 + 2 / 61, abs=1e-15)
    assert got[2][2] == [1, -1]


def test_compact_known_values_and_caller_strings() -> None:
    lists = [["a", "b", "c"], ["c", "a"]]
    ids, scores, ranks = fuse_compact(lists, [1.0, 2.0], 60.0)
    assert ids == ["c", "a", "b"]
    assert ids[0] is lists[0][2]  # the caller's own str objects, not copies
    assert scores[0] == pytest.approx(1 / 63 + 2 / 61, abs=1e-15)
    assert list(memoryview(ranks).cast("i")) == [2, 0, 0, 1, 1, -1]
    assert ranks == array("i", [2, 0, 0, 1, 1, -1]).tobytes()


def test_compact_large_input_releases_gil_path() -> None:
    # Over the native GIL-release threshold (100,000 entries): same result as the reference.
    lists = [[f"id{(i * 7 + j) % 60_000}" for i in range(40_000)] for j in range(3)]
    weights = [1.0, 0.5, 2.0]
    assert fuse_compact(lists, weights, 60.0) == fuse_compact_reference(lists, weights, 60.0)


@pytest.mark.parametrize(
    ("lists", "weights", "k"),
    [
        ([["a"]], [], 60.0),
        ([["a"]], [1.0], -1.0),
        ([["a"]], [float("nan")], 60.0),
        ([["a"]], [-0.1], 60.0),
        ([["a"]], [1.0], float("nan")),
    ],
)
def test_bad_arguments_raise_value_error(lists: list[list[str]], weights: list[float], k: float) -> None:
    with pytest.raises(ValueError):
        fuse(lists, weights, k)
    with pytest.raises(ValueError):
        fuse_reference(lists, weights, k)
    with pytest.raises(ValueError):
        fuse_compact(lists, weights, k)
    with pytest.raises(ValueError):
        fuse_compact_reference(lists, weights, k)
