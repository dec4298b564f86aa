"""Bounded native work (issue 20): long case-insensitive literals plan fast, deadlines and cancellation stop a
search within milliseconds, from another thread while the GIL is released."""

from __future__ import annotations

import random
import threading
import time

import pytest
from codesearch._native import CancelToken, TrigramIndex

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
    "dolore magna aliqua. "
)
# Loose bound for one search of a few hundred small files: a bounded plan takes milliseconds; before the
# planner's caps a 1,000-character case-insensitive literal took 5.9 s (and 400 random characters > 15 s).
BOUNDED_SEARCH_S = 1.0
STOP_WITHIN_S = 0.5  # a cancelled or timed-out search returns within this (the budget is checked per file)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TrigramIndex:
    d = tmp_path_factory.mktemp("budget") / "idx"
    d.mkdir()
    body = "".join(f"def handler_{j}(x):\n    return {LOREM!r} * {j}\n" for j in range(200))
    files = [(f"pkg/m{i:04d}.py", body.encode()) for i in range(400)]
    return TrigramIndex.build(str(d), files)


def _random_text(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(32, 127)) for _ in range(n))


@pytest.mark.parametrize(
    "pattern",
    [(LOREM * 10)[:1000], _random_text(400, 1), _random_text(2048, 2), "sk" * 1024],
    ids=["lorem-1000", "random-400", "random-2048", "sk-2048"],
)
def test_long_case_insensitive_literals_are_bounded(index: TrigramIndex, pattern: str) -> None:
    started = time.perf_counter()
    index.search(pattern, False, False, 20)
    assert time.perf_counter() - started < BOUNDED_SEARCH_S


def test_long_literal_still_finds_its_text(index: TrigramIndex) -> None:
    r = index.search(LOREM.upper().strip(), False, False, 5)
    assert r.matches and not r.full_scan


def test_timeout_stops_a_full_scan(index: TrigramIndex) -> None:
    with pytest.raises(TimeoutError):
        index.search(r"\w+", True, False, 10, timeout_s=0.0)
    assert index.search(r"\w+", True, False, 10, timeout_s=60.0).matches


def test_cancel_from_another_thread_stops_the_search(index: TrigramIndex) -> None:
    token = CancelToken()
    errors: list[BaseException] = []
    stopped_at: list[float] = []

    def search() -> None:
        try:
            while True:  # a full scan repeated: cancellation must stop it wherever it is
                index.search(r"[a-z]+_\d+|\w+\s+\w+", True, False, 10, cancel=token)
        except BaseException as e:  # noqa: BLE001 - the test looks at what came back
            errors.append(e)
            stopped_at.append(time.perf_counter())

    worker = threading.Thread(target=search)
    worker.start()
    time.sleep(0.2)
    cancelled_at = time.perf_counter()
    token.cancel()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert token.cancelled
    assert len(errors) == 1 and isinstance(errors[0], InterruptedError), errors
    assert stopped_at[0] - cancelled_at < STOP_WITHIN_S


def test_bad_timeout_is_a_value_error(index: TrigramIndex) -> None:
    with pytest.raises(ValueError):
        index.search("x", False, True, 1, timeout_s=float("nan"))
