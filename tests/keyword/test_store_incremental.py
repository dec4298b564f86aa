"""A keyword generation updated file by file (edits, deletes, new files) finds what a full rebuild finds."""

from __future__ import annotations

import hashlib
from pathlib import Path

from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.keyword.store import KeywordSnapshot, apply_batch, open_snapshot
from codesearch.v1 import common_pb2

QUERIES = ["parse", "cache", "brand_new", "value error"]


def indexed(path: str, text: str) -> common_pb2.IndexedFile:
    data = text.encode()
    lines = text.count("\n") + 1
    chunk = common_pb2.Chunk(path=path, start_line=1, end_line=lines, text=text, language="python")
    return common_pb2.IndexedFile(
        path=path,
        language="python",
        content=data,
        content_hash=hashlib.sha256(data).hexdigest(),
        chunks=[chunk],
    )


def found(snap: KeywordSnapshot) -> dict[str, object]:
    """What each query finds in both indexes (BM25 hits as a set: deleted docs still count in its statistics)."""
    out: dict[str, object] = {"paths": sorted(snap.trigram.paths()), "files": snap.files}
    for q in QUERIES:
        out[f"bm25 {q}"] = {(h.doc.path, h.doc.start_line) for h in snap.bm25.search(q, 1000, [])}
        out[f"grep {q}"] = {(m.path, m.line) for m in snap.trigram.search(q, False, False, 1000).matches}
    return out


def test_file_by_file_updates_find_what_a_rebuild_finds(tmp_path: Path) -> None:
    state = {f"pkg/m{i}.py": f"def parse_{i}(x):\n    return cache_{i}(x)\n" for i in range(6)}
    inc = SnapshotDir(tmp_path / "inc")
    apply_batch(inc, IndexBatch("r", True, 1, [indexed(p, t) for p, t in state.items()]))
    updates: list[tuple[dict[str, str], list[str]]] = [
        ({"pkg/m1.py": "def brand_new():\n    raise ValueError('parse')\n"}, []),
        ({}, ["pkg/m2.py", "pkg/never_indexed.py"]),
        ({"pkg/added.py": "class Cache:\n    def parse(self): ...\n", "pkg/m1.py": "x = 1\n"}, ["pkg/m4.py"]),
        ({"pkg/m4.py": "def parse_again(): ...\n"}, []),
    ]
    for version, (written, deleted) in enumerate(updates, start=2):
        generation, _, _ = apply_batch(
            inc, IndexBatch("r", False, version, [indexed(p, t) for p, t in written.items()], deleted)
        )
        for p in deleted:
            state.pop(p, None)
        state.update(written)
        full = SnapshotDir(tmp_path / f"full{version}")
        full_generation, _, _ = apply_batch(
            full, IndexBatch("r", True, 1, [indexed(p, t) for p, t in state.items()])
        )
        assert found(open_snapshot(generation, version)) == found(open_snapshot(full_generation, 1))
    assert found(open_snapshot(generation, version))["bm25 brand_new"] == set()  # m1 was edited again
