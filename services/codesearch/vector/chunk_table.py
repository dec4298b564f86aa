"""The vector leg's chunk table: one SQLite file per generation, what a hit shows and what each tier embeds.

    chunks(key -> path, lines, language, symbol, breadcrumb, doc hash, doc block and slot)
    doc_blocks(id -> the doc texts and the snippets of one sent file's chunks, each zlib-compressed JSON, in slot
               order)
    meta(index_version, next_key, files)

A doc text is read again only when a tier embeds after the update (the transformer tier, a changed model) and by
late interaction, and the snippets once, when the table is opened: both are stored compressed, a file's chunks
together (one file's texts share most words). The doc hash is stored as its 32 bytes. Generations written before
the blocks hold the text and the snippet in each row (and a content hash, no longer read); their rows are read as
they are.
Rows are read by column name (sqlite3.Row), so the schema can grow without shifting anyone's indexes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from codesearch.common.sqlite_batches import in_batches
from codesearch.v1 import common_pb2

CHUNKS_DB = "chunks.sqlite"
SNIPPET_LINES = 6  # enough to show the signature and docstring summary of a hit
FALLBACK_WINDOW_LINES = 40  # a file sent without chunks is cut into windows the model can read most of
# zlib level of a file's doc texts. On the standard library (598 files, 10.4 MB of doc text): level 1 3.5 MB in
# 0.13 s, level 6 3.0 MB in 0.30 s; reading all back 0.06 s either way. Indexing time is the scarcer.
DOC_BLOCK_LEVEL = 1
# A table updated in place keeps the room its replaced rows held (free pages, and pages holding one row where
# they held several): when an update rewrites more than this share of the rows, or frees more than this share of
# the pages, the file is compacted (VACUUM: 0.11 s for the standard library's 12 MB table). A test table that stored
# its texts inline halved.
VACUUM_SHARE = 0.25

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
  key INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER, end_line INTEGER, language TEXT,
  symbol TEXT, breadcrumb TEXT, snippet TEXT, doc_hash BLOB, doc_text TEXT, doc_block INTEGER, doc_slot INTEGER);
CREATE TABLE IF NOT EXISTS doc_blocks (id INTEGER PRIMARY KEY, texts BLOB NOT NULL, snippets BLOB);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""
_BLOCK_COLUMNS = ("doc_block", "doc_slot")  # added to a table copied from a generation written before them
_SNIPPET_COLUMN = "snippets"  # added to doc_blocks written before it


@dataclass(frozen=True)
class ChunkMeta:
    """What a hit shows of one chunk, and the hash of the text its vectors were made from."""

    path: str
    start_line: int
    end_line: int
    language: str
    symbol: str
    breadcrumb: tuple[str, ...]
    snippet: str
    doc_hash: str


class SentChunk(NamedTuple):
    """One chunk of an update, as the indexer sent it (or as the fallback windows cut it)."""

    path: str
    start_line: int
    end_line: int
    language: str
    text: str
    breadcrumb: list[str]
    symbol: str
    doc_text: str = ""  # the text to embed, when the indexer made it (common/doc_text.py)


class TableMeta(NamedTuple):
    index_version: int
    next_key: int
    files: int


def snippet(text: str) -> str:
    return "\n".join(text.splitlines()[:SNIPPET_LINES])


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file per generation
    db.row_factory = sqlite3.Row
    return db


def read_table(gen: Path) -> tuple[TableMeta, dict[int, ChunkMeta]]:
    """A generation's meta and every chunk's metadata (not its doc text)."""
    db = connect(gen / CHUNKS_DB)
    try:
        meta = {r["name"]: r["value"] for r in db.execute("SELECT name, value FROM meta")}
        blocked = _has_columns(db, "chunks", _BLOCK_COLUMNS)
        rows = db.execute(
            "SELECT key, path, start_line, end_line, language, symbol, breadcrumb, snippet, doc_hash"
            + (", doc_block, doc_slot" if blocked else ", NULL AS doc_block, NULL AS doc_slot")
            + " FROM chunks"
        ).fetchall()
        snippets_of: dict[int, list[str]] = {}
        if blocked and _has_columns(db, "doc_blocks", (_SNIPPET_COLUMN,)):
            for r in db.execute("SELECT id, snippets FROM doc_blocks WHERE snippets IS NOT NULL"):
                snippets_of[r["id"]] = json.loads(zlib.decompress(r["snippets"]))
    finally:
        db.close()
    chunks = {
        r["key"]: ChunkMeta(
            path=r["path"],
            start_line=r["start_line"],
            end_line=r["end_line"],
            language=r["language"] or "",
            symbol=r["symbol"] or "",
            breadcrumb=tuple(json.loads(r["breadcrumb"] or "[]")),
            snippet=r["snippet"] if r["snippet"] is not None else snippets_of[r["doc_block"]][r["doc_slot"]],
            doc_hash=_hash_text(r["doc_hash"]),
        )
        for r in rows
    }
    table_meta = TableMeta(
        index_version=int(meta.get("index_version", 0)),
        next_key=int(meta.get("next_key", 1)),
        files=int(meta.get("files", 0)),
    )
    return table_meta, chunks


def write_table(
    building: Path,
    gen_before: Path | None,
    rows: dict[int, ChunkMeta],
    blocks: list[list[tuple[int, str]]],
    removed: list[int],
    index_version: int,
    next_key: int,
) -> None:
    """The new generation's chunk table: `gen_before`'s (none: a fresh one), less `removed`, with each of `blocks`
    (the (key, doc text) of one sent file's chunks, every one of them, in order) written as one block."""
    db_path = building / CHUNKS_DB
    if gen_before is not None:
        shutil.copyfile(gen_before / CHUNKS_DB, db_path)
    db = connect(db_path)
    try:
        db.executescript(_SCHEMA)
        for column in _BLOCK_COLUMNS:
            if not _has_columns(db, "chunks", (column,)):
                db.execute(f"ALTER TABLE chunks ADD COLUMN {column} INTEGER")
        if not _has_columns(db, "doc_blocks", (_SNIPPET_COLUMN,)):
            db.execute(f"ALTER TABLE doc_blocks ADD COLUMN {_SNIPPET_COLUMN} BLOB")
        db.execute("BEGIN")
        db.executemany("DELETE FROM chunks WHERE key = ?", [(k,) for k in removed])
        for block in blocks:
            cur = db.execute(
                "INSERT INTO doc_blocks (texts, snippets) VALUES (?, ?)",
                (_packed([text for _key, text in block]), _packed([rows[k].snippet for k, _text in block])),
            )
            db.executemany(
                "INSERT OR REPLACE INTO chunks (key, path, start_line, end_line, language, symbol, breadcrumb,"
                " doc_hash, doc_block, doc_slot) VALUES (?,?,?,?,?,?,?,?,?,?)",
                [(k, *_columns(rows[k]), cur.lastrowid, slot) for slot, (k, _text) in enumerate(block)],
            )
        # A block goes with the last row that reads it (a file's chunks are all rewritten when it is sent).
        db.execute(
            "DELETE FROM doc_blocks WHERE id NOT IN (SELECT doc_block FROM chunks WHERE doc_block IS NOT NULL)"
        )
        files = len({m.path for m in rows.values()})
        meta = {"index_version": index_version, "next_key": next_key, "files": files}
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(n, str(v)) for n, v in meta.items()])
        db.execute("COMMIT")
        rewritten = len(removed) + sum(len(block) for block in blocks)
        free, pages = (
            db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("freelist_count", "page_count")
        )
        if gen_before is not None and (rewritten > VACUUM_SHARE * len(rows) or free > VACUUM_SHARE * pages):
            db.execute("VACUUM")
    finally:
        db.close()


def read_doc_texts(gen: Path, keys: list[int]) -> list[tuple[int, str, str]]:
    """(key, doc hash, doc text) of `keys`, in key order."""
    db = connect(gen / CHUNKS_DB)
    try:
        blocked = _has_columns(db, "chunks", _BLOCK_COLUMNS)
        columns = "key, doc_hash, doc_text" + (", doc_block, doc_slot" if blocked else ", NULL, NULL")
        found = []
        for part, marks in in_batches(keys):
            found += db.execute(f"SELECT {columns} FROM chunks WHERE key IN ({marks})", part).fetchall()
        texts_of: dict[int, list[str]] = {}
        needed = sorted({r[3] for r in found if r[2] is None and r[3] is not None})
        for part, marks in in_batches(needed):
            for r in db.execute(f"SELECT id, texts FROM doc_blocks WHERE id IN ({marks})", part):
                texts_of[r["id"]] = json.loads(zlib.decompress(r["texts"]))
        return sorted(
            (r[0], _hash_text(r[1]), r[2] if r[2] is not None else texts_of[r[3]][r[4]]) for r in found
        )
    finally:
        db.close()


def _columns(m: ChunkMeta) -> tuple[object, ...]:
    """A chunk's row from path to doc hash, as write_table stores it."""
    breadcrumb = json.dumps(list(m.breadcrumb))
    return (m.path, m.start_line, m.end_line, m.language, m.symbol, breadcrumb, bytes.fromhex(m.doc_hash))


def _has_columns(db: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> bool:
    return {r["name"] for r in db.execute(f"PRAGMA table_info({table})")} >= set(columns)


def _packed(texts: list[str]) -> bytes:
    return zlib.compress(json.dumps(texts).encode(), DOC_BLOCK_LEVEL)


def _hash_text(stored: str | bytes) -> str:
    """A doc hash as the embedding cache keys it (hex): stored as its bytes, or as text by older tables."""
    return stored.hex() if isinstance(stored, bytes) else stored


def sent_chunks(f: common_pb2.IndexedFile) -> list[SentChunk]:
    """A file's chunks as sent. A file sent without chunks is cut into fixed windows so it is still searchable."""
    out = [
        SentChunk(
            path=c.path or f.path,
            start_line=c.start_line,
            end_line=c.end_line,
            language=c.language or f.language,
            text=c.text,
            breadcrumb=list(c.breadcrumb),
            symbol=c.symbol,
            doc_text=c.doc_text,
        )
        for c in f.chunks
    ]
    if out or not f.content:
        return out
    lines = f.content.decode("utf-8", "replace").splitlines()
    for i in range(0, len(lines), FALLBACK_WINDOW_LINES):
        text = "\n".join(lines[i : i + FALLBACK_WINDOW_LINES])
        if text.strip():
            end = min(len(lines), i + FALLBACK_WINDOW_LINES)
            out.append(SentChunk(f.path, i + 1, end, f.language, text, [], ""))
    return out
