"""The chunk table keeps each sent file's doc texts and snippets as compressed blocks, and reads older tables as they
are."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path

from codesearch.vector.chunk_table import (
    CHUNKS_DB,
    ChunkMeta,
    connect,
    read_doc_texts,
    read_table,
    write_table,
)


def meta(path: str, line: int) -> ChunkMeta:
    digest = hashlib.sha256(f"{path}{line}".encode()).hexdigest()
    return ChunkMeta(path, line, line + 9, "python", "", (), f"def f{line}():", digest)


def doc(path: str, line: int) -> str:
    return f"{path} f{line}\ndef f{line}():\n    return compute_the_value_of_{line}(x)\n" * 3


def generation(root: Path, name: str) -> Path:
    gen = root / name
    gen.mkdir()
    return gen


def inline_row(m: ChunkMeta) -> list[object]:
    """A chunk's columns as a table of the older schema holds them (its texts follow)."""
    fields = {"content_hash": "", **dataclasses.asdict(m)}  # content_hash: a column no longer read
    fields["breadcrumb"] = json.dumps(list(m.breadcrumb))
    order = ("path", "start_line", "end_line", "language", "content_hash", "symbol", "breadcrumb", "snippet")
    return [fields[name] for name in (*order, "doc_hash")]


def blocks_in(gen: Path) -> int:
    db = sqlite3.connect(gen / CHUNKS_DB)
    try:
        return int(db.execute("SELECT count(*) FROM doc_blocks").fetchone()[0])
    finally:
        db.close()


def test_doc_texts_round_trip_through_compressed_blocks(tmp_path: Path) -> None:
    rows = {1: meta("a.py", 1), 2: meta("a.py", 20), 3: meta("b.py", 1)}
    blocks = [[(1, doc("a.py", 1)), (2, doc("a.py", 20))], [(3, doc("b.py", 1))]]
    gen = generation(tmp_path, "g1")
    write_table(gen, None, rows, blocks, [], 1, 4)
    assert read_doc_texts(gen, [3, 1, 2]) == [
        (k, rows[k].doc_hash, doc(rows[k].path, rows[k].start_line)) for k in (1, 2, 3)
    ]
    assert read_table(gen)[1] == rows
    db = connect(gen / CHUNKS_DB)
    try:
        inline = "doc_text IS NOT NULL OR snippet IS NOT NULL OR typeof(doc_hash) != 'blob'"
        assert db.execute(f"SELECT count(*) FROM chunks WHERE {inline}").fetchone()[0] == 0
        stored = sum(len(r[0]) for r in db.execute("SELECT texts FROM doc_blocks"))
    finally:
        db.close()
    assert stored < sum(len(text) for block in blocks for _key, text in block) / 3


def test_a_file_sent_again_replaces_its_block(tmp_path: Path) -> None:
    rows = {1: meta("a.py", 1), 2: meta("a.py", 20), 3: meta("b.py", 1)}
    first = generation(tmp_path, "g1")
    write_table(
        first, None, rows, [[(1, doc("a.py", 1)), (2, doc("a.py", 20))], [(3, doc("b.py", 1))]], [], 1, 4
    )
    # a.py edited: chunk 1 unchanged (its key kept), chunk 2 gone, chunk 4 new.
    edited = {1: rows[1], 3: rows[3], 4: meta("a.py", 40)}
    second = generation(tmp_path, "g2")
    write_table(second, first, edited, [[(1, doc("a.py", 1)), (4, doc("a.py", 40))]], [2], 2, 5)
    texts = {k: text for k, _hash, text in read_doc_texts(second, [1, 2, 3, 4])}
    assert texts == {1: doc("a.py", 1), 3: doc("b.py", 1), 4: doc("a.py", 40)}
    assert blocks_in(second) == 2  # a.py's first block went with its last row
    assert read_table(second)[1] == edited
    assert read_doc_texts(first, [2]) == [
        (2, rows[2].doc_hash, doc("a.py", 20))
    ]  # the old generation is intact


def test_a_table_that_stored_texts_inline_is_read_and_updated(tmp_path: Path) -> None:
    # A generation written before the blocks: no doc_blocks table, no block columns, the text in each row.
    old = generation(tmp_path, "old")
    db = sqlite3.connect(old / CHUNKS_DB)
    db.executescript(
        "CREATE TABLE chunks (key INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER, end_line INTEGER,"
        " language TEXT, content_hash TEXT, symbol TEXT, breadcrumb TEXT, snippet TEXT, doc_hash TEXT,"
        " doc_text TEXT); CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT);"
    )
    rows = {k: meta(f"m{k}.py", 1) for k in range(1, 41)}
    db.executemany(
        "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [(k, *inline_row(m), doc(m.path, 1) * 20) for k, m in rows.items()],
    )
    db.executemany(
        "INSERT INTO meta VALUES (?, ?)", [("index_version", "1"), ("next_key", "41"), ("files", "40")]
    )
    db.commit()
    db.close()
    assert read_doc_texts(old, [5]) == [(5, rows[5].doc_hash, doc("m5.py", 1) * 20)]
    assert read_table(old)[1] == rows
    size_before = (old / CHUNKS_DB).stat().st_size
    # Every file sent again: a fresh table would do, but an update of most files in place gives its pages back.
    new = generation(tmp_path, "new")
    sent = [[(k, doc(f"m{k}.py", 1) * 20)] for k in range(2, 41)]
    write_table(new, old, rows, sent, [], 2, 41)
    texts = dict((k, text) for k, _h, text in read_doc_texts(new, list(rows)))
    assert texts == {k: doc(f"m{k}.py", 1) * 20 for k in rows}  # row 1 still inline, the rest in blocks
    assert read_table(new)[1] == rows
    assert (new / CHUNKS_DB).stat().st_size < size_before / 2
