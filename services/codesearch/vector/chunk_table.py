"""The vector leg's chunk table: one SQLite file per generation, what a hit shows and what each tier embeds.

    chunks(key -> path, lines, language, hashes, symbol, breadcrumb, snippet, doc text)
    meta(index_version, next_key, files)

Rows are read by column name (sqlite3.Row), so the schema can grow without shifting anyone's indexes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from codesearch.common.sqlite_batches import in_batches
from codesearch.v1 import common_pb2
from codesearch.vector.embedding_cache import text_hash

CHUNKS_DB = "chunks.sqlite"
SNIPPET_LINES = 6  # enough to show the signature and docstring summary of a hit
FALLBACK_WINDOW_LINES = 40  # a file sent without chunks is cut into windows the model can read most of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
  key INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER, end_line INTEGER, language TEXT,
  content_hash TEXT, symbol TEXT, breadcrumb TEXT, snippet TEXT, doc_hash TEXT, doc_text TEXT);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""


@dataclass(frozen=True)
class ChunkMeta:
    """What a hit shows of one chunk, and the hash of the text its vectors were made from."""

    path: str
    start_line: int
    end_line: int
    language: str
    content_hash: str
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
    content_hash: str
    text: str
    breadcrumb: list[str]
    symbol: str


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
        rows = db.execute(
            "SELECT key, path, start_line, end_line, language, content_hash, symbol, breadcrumb, snippet,"
            " doc_hash FROM chunks"
        ).fetchall()
    finally:
        db.close()
    chunks = {
        r["key"]: ChunkMeta(
            path=r["path"],
            start_line=r["start_line"],
            end_line=r["end_line"],
            language=r["language"] or "",
            content_hash=r["content_hash"] or "",
            symbol=r["symbol"] or "",
            breadcrumb=tuple(json.loads(r["breadcrumb"] or "[]")),
            snippet=r["snippet"] or "",
            doc_hash=r["doc_hash"],
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
    texts: dict[int, str],
    removed: list[int],
    index_version: int,
    next_key: int,
) -> None:
    """The new generation's chunk table: the previous one, less `removed`, plus the chunks in `texts`."""
    db_path = building / CHUNKS_DB
    if gen_before is not None:
        shutil.copyfile(gen_before / CHUNKS_DB, db_path)
    db = connect(db_path)
    try:
        db.executescript(_SCHEMA)
        db.execute("BEGIN")
        db.executemany("DELETE FROM chunks WHERE key = ?", [(k,) for k in removed])
        db.executemany(
            "INSERT INTO chunks (key, path, start_line, end_line, language, content_hash, symbol, breadcrumb,"
            " snippet, doc_hash, doc_text) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    k,
                    m.path,
                    m.start_line,
                    m.end_line,
                    m.language,
                    m.content_hash,
                    m.symbol,
                    json.dumps(list(m.breadcrumb)),
                    m.snippet,
                    m.doc_hash,
                    texts[k],
                )
                for k, m in ((k, rows[k]) for k in texts)
            ],
        )
        files = len({m.path for m in rows.values()})
        meta = {"index_version": index_version, "next_key": next_key, "files": files}
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(n, str(v)) for n, v in meta.items()])
        db.execute("COMMIT")
    finally:
        db.close()


def read_doc_texts(gen: Path, keys: list[int]) -> list[tuple[int, str, str]]:
    """(key, doc hash, doc text) of `keys`, in key order."""
    db = connect(gen / CHUNKS_DB)
    try:
        out: list[tuple[int, str, str]] = []
        for part, marks in in_batches(keys):
            out += [
                (r["key"], r["doc_hash"], r["doc_text"])
                for r in db.execute(
                    f"SELECT key, doc_hash, doc_text FROM chunks WHERE key IN ({marks})", part
                )
            ]
        return sorted(out)
    finally:
        db.close()


def sent_chunks(f: common_pb2.IndexedFile) -> list[SentChunk]:
    """A file's chunks as sent. A file sent without chunks is cut into fixed windows so it is still searchable."""
    out = [
        SentChunk(
            path=c.path or f.path,
            start_line=c.start_line,
            end_line=c.end_line,
            language=c.language or f.language,
            content_hash=c.content_hash or text_hash(c.text),
            text=c.text,
            breadcrumb=list(c.breadcrumb),
            symbol=c.symbol,
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
            out.append(SentChunk(f.path, i + 1, end, f.language, text_hash(text), text, [], ""))
    return out
