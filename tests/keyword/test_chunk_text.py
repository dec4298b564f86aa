"""A chunk's text is stored once: the BM25 index keeps it only where it is not the file's own lines."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import grpc
import pytest
from codesearch.common.index_update import IndexBatch, update_messages
from codesearch.common.snapshot import SnapshotDir
from codesearch.config import Settings
from codesearch.keyword import bm25
from codesearch.keyword.service import register
from codesearch.keyword.store import apply_batch, chunk_docs, open_snapshot
from codesearch.v1 import common_pb2, keyword_pb2, keyword_pb2_grpc

from tests.fixture_types import StartServer

SOURCE = (
    "import os\n\n\ndef load_config(path):\n    return os.environ.get(path)\r\n\nclass Cache:\n    size = 3\n"
)
NOT_THE_LINES = "a summary the indexer wrote: cache of loaded settings"


def file_with_chunks() -> common_pb2.IndexedFile:
    data = SOURCE.encode()
    lines = SOURCE.split("\n")
    chunks = [
        common_pb2.Chunk(start_line=4, end_line=5, text="\n".join(lines[3:5]), symbol="load_config"),
        common_pb2.Chunk(start_line=7, end_line=8, text="\n".join(lines[6:8]), symbol="Cache"),
        # A client may send a chunk text of its own: it is kept as sent.
        common_pb2.Chunk(start_line=1, end_line=1, text=NOT_THE_LINES),
    ]
    return common_pb2.IndexedFile(
        path="pkg/config.py",
        language="python",
        content=data,
        content_hash=hashlib.sha256(data).hexdigest(),
        chunks=chunks,
    )


def test_only_a_chunk_that_is_not_the_files_lines_is_stored(tmp_path: Path) -> None:
    generation, _, _ = apply_batch(
        SnapshotDir(tmp_path / "r"), IndexBatch("r", True, 1, [file_with_chunks()])
    )
    snap = open_snapshot(generation, 1)
    docs = {d.start_line: d for d in snap.bm25.all_docs()}
    assert {n: d.text_stored for n, d in docs.items()} == {4: False, 7: False, 1: True}
    assert docs[4].text == ""  # not a second copy
    sent = {c.start_line: c.text for c in file_with_chunks().chunks}
    assert {n: snap.chunk_text(d) for n, d in docs.items()} == sent


def test_snippets_read_from_the_files_lines(start_server: StartServer, settings: Settings) -> None:
    server = start_server([lambda s: register(s, settings)])
    stub = keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(server.address))
    stub.UpdateKeywordIndex(
        iter(
            update_messages(keyword_pb2.UpdateKeywordIndexRequest, "demo", [file_with_chunks()], [], True, 1)
        )
    )
    hits = stub.KeywordSearch(keyword_pb2.KeywordSearchRequest(query="load_config environ", limit=5)).hits
    assert hits[0].location.start_line == 4
    assert hits[0].snippet == "def load_config(path):\n    return os.environ.get(path)\r"
    summary = stub.KeywordSearch(keyword_pb2.KeywordSearchRequest(query="summary settings", limit=5)).hits
    assert summary[0].snippet == NOT_THE_LINES


def test_an_index_that_stored_every_text_still_answers_and_takes_updates(tmp_path: Path) -> None:
    # Written before texts were stored once: every chunk's text is in the BM25 store.
    old = tmp_path / "old"
    f = file_with_chunks()
    stored = [dataclasses.replace(d, text_stored=True) for d in chunk_docs(f, SOURCE)]
    bm25.write(old, None, stored, set())
    assert all(d.text_stored and d.text for d in bm25.Bm25Reader(old).all_docs())
    # Its segments join the next generation as they are; the new chunk's text is not stored.
    new = tmp_path / "new"
    added = bm25.ChunkDoc("pkg/other.py", 1, 1, "python", "x = 1", "", (), text_stored=False)
    assert bm25.write(new, old, [added], set()) == 4
    by_path = {(d.path, d.start_line): d for d in bm25.Bm25Reader(new).all_docs()}
    assert by_path[("pkg/config.py", 4)].text == stored[0].text
    assert not by_path[("pkg/other.py", 1)].text_stored


def test_an_index_that_recorded_positions_is_written_again_on_its_next_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapdir = SnapshotDir(tmp_path / "r")
    other = common_pb2.IndexedFile(
        path="pkg/other.py",
        language="python",
        content=b"def other():\n    pass\n",
        content_hash="h2",
        chunks=[common_pb2.Chunk(start_line=1, end_line=2, text="def other():\n    pass", symbol="other")],
    )
    with monkeypatch.context() as m:
        m.setattr(bm25, "SEARCHED_RECORD", "position")  # the schema before frequencies only
        first, _, _ = apply_batch(snapdir, IndexBatch("r", True, 1, [file_with_chunks(), other]))
    assert not bm25._schema_is_current(first / "bm25")
    second, _, _ = apply_batch(snapdir, IndexBatch("r", False, 2, [], ["pkg/other.py"]))
    assert bm25._schema_is_current(second / "bm25")
    snap = open_snapshot(second, 2)
    sent = {c.start_line: c.text for c in file_with_chunks().chunks}
    assert {d.start_line: snap.chunk_text(d) for d in snap.bm25.all_docs()} == sent  # read from the old files
    assert {d.start_line: d.text_stored for d in snap.bm25.all_docs()} == {4: False, 7: False, 1: True}
    assert snap.bm25.search("load_config", 5, [])[0].doc.start_line == 4
