"""Mining's deduplication: exact (normalised code) and near (MinHash/LSH), with both MinHash engines, and blocked code."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from codesearch_lab.mining import dedup

CODE = "\n".join(
    f"def handler_{i}(request, response):\n    value = request.get('key_{i}', {i})\n"
    f"    response.write(str(value * {i} + len(request)))\n    return response"
    for i in range(12)
)


def _index(engine: str) -> dedup.Index:
    return dedup.Index(sqlite3.connect(":memory:"), dedup.Hasher(7, engine))


@pytest.mark.parametrize("engine", ["builtin", dedup.ENGINE])
def test_exact_and_near_duplicates_are_found(engine: str) -> None:
    index = _index(engine)
    assert index.check_and_add(1, CODE) == "new"
    assert index.check_and_add(2, "  " + CODE.replace("\n", "\n\n")) == "exact"  # whitespace only
    lightly_edited = CODE.replace("handler_11", "handler_eleven")
    assert index.check_and_add(3, lightly_edited) == "near"
    other = "fn parse(s: &str) -> Option<u16> {\n    let n: u16 = s.parse().ok()?;\n    Some(n + 1)\n}"
    assert index.check_and_add(4, other) == "new"


def test_the_builtin_minhash_estimates_jaccard() -> None:
    hasher = dedup.Hasher(3, "builtin")
    a, b = hasher.signature(CODE), hasher.signature(CODE.replace("handler_11", "handler_eleven"))
    assert a.dtype == np.uint32 and a.shape == (dedup.NUM_PERM,)
    assert float(np.mean(a == b)) >= dedup.NEAR_THRESHOLD
    c = hasher.signature("completely different text with other tokens entirely " * 3)
    assert float(np.mean(a == c)) < 0.2


def test_blocked_code_drops_a_pair_that_repeats_it() -> None:
    index = _index("builtin")
    assert index.block([CODE]) == 1
    assert index.check_and_add(1, CODE) == "blocked"
    assert index.check_and_add(2, CODE.replace("handler_11", "handler_eleven")) == "blocked"
