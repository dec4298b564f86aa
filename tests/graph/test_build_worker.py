"""A large update is built in a worker process, and the database it builds is the one this process would build."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codesearch.common.index_update import IndexBatch
from codesearch.common.process_pool import MIN_FILES
from codesearch.config import Settings
from codesearch.graph.service import GraphServicer
from codesearch.graph.store import DB_NAME
from codesearch.orchestrator.indexed_file import graph_file, index_file


def _files(n: int) -> list:
    out = []
    for i in range(n):
        source = f"import mod_{(i + 1) % n}\n\n\ndef handler_{i}(event):\n    return handler_{(i + 1) % n}(event)\n"
        indexed, parsed = index_file("repo", f"mod_{i}.py", source.encode())
        out.append(graph_file(indexed, parsed))
    return out


def _rows(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    # Every table's rows in one order (call_targets has no rowid: it is ordered by its key).
    return {
        t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
        for t in tables
        if t != "sqlite_stat1"
    }


def _build(home: Path, workers: str, files: list) -> tuple[dict[str, list[tuple]], int]:
    settings = Settings.from_env({"CODESEARCH_HOME": str(home), "CODESEARCH_INDEX_WORKERS": workers})
    graph = GraphServicer(settings)
    stats, _ = graph.apply_batch(IndexBatch("repo", True, 1, files, [], True))
    current = graph._snapshot("repo").current()
    assert current is not None
    return _rows(current / DB_NAME), stats.definitions


def test_a_worker_builds_the_database_this_process_builds(tmp_path: Path) -> None:
    files = _files(MIN_FILES + 6)
    in_worker = _build(tmp_path / "worker", "2", files)
    here = _build(tmp_path / "here", "1", files)
    assert in_worker == here
    rows, definitions = in_worker
    assert definitions == MIN_FILES + 6 and rows["calls"]
