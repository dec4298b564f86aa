"""The embedding cache file that several processes (data homes, eval runs, pods on one volume) share."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import numpy as np
from codesearch.vector.embedding_cache import EmbeddingCache

PROCESSES = 6
ROUNDS = 40  # without the retry, 4 of 120 openings failed in 20 rounds: 40 leave a pass by luck at about e^-8


def _open_at_once(path: str, barrier: Any) -> str:
    barrier.wait()
    try:
        EmbeddingCache(Path(path))
    except Exception as err:  # noqa: BLE001 - the test reports whatever an opening raised
        return repr(err)
    return "ok"


def test_processes_opening_a_new_cache_file_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    failures: list[str] = []
    with context.Manager() as manager, context.Pool(PROCESSES) as pool:
        for round_no in range(ROUNDS):
            barrier = manager.Barrier(PROCESSES)
            path = str(tmp_path / f"cache-{round_no}.sqlite")
            results = pool.starmap(_open_at_once, [(path, barrier)] * PROCESSES)
            failures += [r for r in results if r != "ok"]
    assert failures == []


def test_vectors_written_by_one_process_are_read_by_another(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    writer, reader = EmbeddingCache(path), EmbeddingCache(path)
    writer.put_many("m", [("h1", np.array([1.0, 2.0], dtype=np.float32))])
    got = reader.get_many("m", ["h1", "h2"])
    assert list(got) == ["h1"] and got["h1"].tolist() == [1.0, 2.0]
    assert (reader.hits, reader.misses) == (1, 1)
