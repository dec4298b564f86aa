"""One repository's graph in SQLite: files, definitions, call sites, imports, resolved edges and centrality.

Writes happen on a copy of the live database inside a new SnapshotDir generation, so a commit is atomic and a
crash leaves the previous generation live. Incremental: a changed file replaces only its own rows; imports are
re-resolved, calls are re-resolved where the names they may point to changed, then PageRank is recomputed
(or, for an update of a few files, carried over from the previous generation; graph/centrality_update.py).
"""

from __future__ import annotations

import posixpath
import shutil
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from codesearch.common.languages import detect_language
from codesearch.common.parsing import Extraction, extract
from codesearch.common.parsing.wire import from_message
from codesearch.common.sqlite_batches import in_batches
from codesearch.graph.centrality_update import carry_over_centrality, compute_centrality
from codesearch.graph.resolve import (
    MAX_EDGE_FANOUT,
    CallContext,
    DefInfo,
    FileIndex,
    ImportRow,
    go_module_of,
    resolve_call,
)
from codesearch.v1 import common_pb2

DB_NAME = "graph.db"
MAX_SNIPPET_CHARS = 200  # call-line text kept for answers; longer lines are cut
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, language TEXT, hash TEXT,
  module TEXT, error_count INTEGER DEFAULT 0, centrality REAL DEFAULT 0);
CREATE TABLE IF NOT EXISTS defs(id INTEGER PRIMARY KEY, file_id INTEGER, name TEXT, qname TEXT, kind TEXT,
  start_line INTEGER, end_line INTEGER, signature TEXT, parent TEXT, centrality REAL DEFAULT 0);
CREATE TABLE IF NOT EXISTS calls(id INTEGER PRIMARY KEY, file_id INTEGER, caller_id INTEGER, caller TEXT,
  callee TEXT, receiver TEXT, line INTEGER, snippet TEXT, candidates INTEGER DEFAULT 0);
-- Clustered on (call_id, def_id), no rowid: the table is its own index by call (a rowid table with an index on
-- call_id held the pairs twice: the standard library's graph.db 15.7 -> 14.2 MB).
CREATE TABLE IF NOT EXISTS call_targets(call_id INTEGER, def_id INTEGER, PRIMARY KEY (call_id, def_id))
  WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imports(id INTEGER PRIMARY KEY, file_id INTEGER, module TEXT, line INTEGER,
  level INTEGER, name TEXT, alias TEXT, kind TEXT, target_file_id INTEGER);
"""
# Made after a fresh database's rows are in: building an index once is cheaper than keeping it up to date row by
# row (the standard library's full build 1.21-1.32 -> 1.08-1.15 s, 16.2 -> 15.7 MB; the same rows and statistics).
INDEXES = """
CREATE INDEX IF NOT EXISTS defs_name ON defs(name);
CREATE INDEX IF NOT EXISTS defs_lname ON defs(lower(name));
CREATE INDEX IF NOT EXISTS defs_qname ON defs(qname);
CREATE INDEX IF NOT EXISTS defs_file ON defs(file_id, start_line);
CREATE INDEX IF NOT EXISTS calls_callee ON calls(callee);
CREATE INDEX IF NOT EXISTS calls_file ON calls(file_id);
CREATE INDEX IF NOT EXISTS calls_caller ON calls(caller_id);
CREATE INDEX IF NOT EXISTS ct_def ON call_targets(def_id);
CREATE INDEX IF NOT EXISTS imports_file ON imports(file_id);
CREATE INDEX IF NOT EXISTS imports_target ON imports(target_file_id);
CREATE INDEX IF NOT EXISTS files_module ON files(module);
"""


@dataclass
class UpdateStats:
    files_upserted: int = 0
    files_deleted: int = 0
    files_with_errors: int = 0
    definitions: int = 0


@dataclass
class FileInput:
    path: str
    language: str
    content_hash: str
    content: bytes
    extraction: Extraction | None = field(default=None)


def connect_writable(path: Path, indexes: bool = True) -> sqlite3.Connection:
    """A connection to a private copy; `indexes=False` leaves the indexes for `add_indexes` (a fresh database)."""
    conn = sqlite3.connect(path, isolation_level=None)
    # The database is a private copy until SnapshotDir.commit fsyncs and publishes it.
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.executescript(SCHEMA + (INDEXES if indexes else ""))
    return conn


def add_indexes(conn: sqlite3.Connection) -> None:
    for statement in INDEXES.strip().splitlines():  # executescript would end the open transaction
        conn.execute(statement)


def connect_readonly(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only=ON")
    return conn


def parse_files(files: Iterable[tuple[str, str, str, bytes]]) -> list[FileInput]:
    """(path, language, hash, content) -> parsed inputs. Language "" is detected from the path."""
    out = []
    for path, language, content_hash, content in files:
        lang = language or detect_language(path, content)
        out.append(FileInput(path, lang, content_hash, content, extract(path, lang, content)))
    return out


def inputs_from_update(files: Iterable[common_pb2.IndexedFile]) -> list[FileInput]:
    """Files of an update stream: the indexer's parse where it sent one, else a parse here (older clients)."""
    out = []
    for f in files:
        if f.HasField("parsed"):
            ex = from_message(f.path, f.language, f.parsed)
            out.append(FileInput(f.path, f.language, f.content_hash, f.content, ex))
        else:
            out.extend(parse_files([(f.path, f.language, f.content_hash, f.content)]))
    return out


def build_from_messages(
    previous_db: Path | None,
    new_db: Path,
    files: list[bytes],
    deleted_paths: list[str],
    replace_all: bool,
    index_version: int,
) -> UpdateStats:
    """build_generation over serialised IndexedFile messages: what a worker process runs (graph/service.py)."""
    messages = [common_pb2.IndexedFile.FromString(f) for f in files]
    return build_generation(
        previous_db, new_db, inputs_from_update(messages), deleted_paths, replace_all, index_version
    )


def build_generation(
    previous_db: Path | None,
    new_db: Path,
    files: list[FileInput],
    deleted_paths: list[str],
    replace_all: bool,
    index_version: int,
) -> UpdateStats:
    """Writes the next generation's database at new_db from previous_db plus the update."""
    fresh = previous_db is None or not previous_db.exists() or replace_all
    if previous_db is not None and not fresh:
        shutil.copyfile(previous_db, new_db)
    conn = connect_writable(new_db, indexes=not fresh)
    try:
        conn.execute("BEGIN")
        stats = _apply(conn, files, deleted_paths, replace_all, indexed=not fresh)
        conn.execute("INSERT OR REPLACE INTO meta VALUES('index_version', ?)", (str(index_version),))
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()
    return stats


def _delete_files(conn: sqlite3.Connection, file_ids: list[int]) -> set[str]:
    """Removes the rows of these files; returns the names their definitions had (calls to re-resolve)."""
    names: set[str] = set()
    for chunk, marks in in_batches(file_ids):
        names.update(
            r[0] for r in conn.execute(f"SELECT DISTINCT name FROM defs WHERE file_id IN ({marks})", chunk)
        )
        conn.execute(
            f"DELETE FROM call_targets WHERE call_id IN (SELECT id FROM calls WHERE file_id IN ({marks}))",
            chunk,
        )
        conn.execute(
            f"DELETE FROM call_targets WHERE def_id IN (SELECT id FROM defs WHERE file_id IN ({marks}))",
            chunk,
        )
        for table in ("defs", "calls", "imports"):
            conn.execute(f"DELETE FROM {table} WHERE file_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM files WHERE id IN ({marks})", chunk)
    return names


def _apply(
    conn: sqlite3.Connection,
    files: list[FileInput],
    deleted_paths: list[str],
    replace_all: bool,
    indexed: bool = True,
) -> UpdateStats:
    """Applies an update; a database made without its indexes (`indexed=False`) gets them once its rows are in."""
    stats = UpdateStats()
    existing = {p: (fid, h) for fid, p, h in conn.execute("SELECT id, path, hash FROM files")}
    incoming = {f.path: f for f in files}  # the last version of a path in the stream wins
    to_delete: list[int] = []
    if replace_all:
        to_delete = [fid for p, (fid, _) in existing.items()]
    else:
        for p in deleted_paths:
            if p in existing and p not in incoming:
                to_delete.append(existing[p][0])
                stats.files_deleted += 1
    changed = []
    for f in incoming.values():
        old = existing.get(f.path)
        stats.files_upserted += 1
        if old is not None and not replace_all and old[1] == f.content_hash and f.content_hash:
            continue  # same bytes: its rows are already right
        if old is not None and not replace_all:
            to_delete.append(old[0])
        changed.append(f)
    touched = len(to_delete) + len(changed) - sum(1 for f in changed if f.path in existing)
    carry = None if replace_all else carry_over_centrality(conn, len(existing), touched)
    if carry is not None:
        carry.read(conn, to_delete)
    affected_names = _delete_files(conn, to_delete)
    if replace_all:
        conn.execute("DELETE FROM meta WHERE key LIKE 'gomod:%'")

    new_file_ids: list[int] = []
    for f in changed:
        ex = f.extraction
        module = ex.module if ex is not None else ""
        cur = conn.execute(
            "INSERT INTO files(path, language, hash, module, error_count) VALUES(?,?,?,?,?)",
            (f.path, f.language, f.content_hash, module, ex.error_count if ex else 0),
        )
        fid = int(cur.lastrowid or 0)
        new_file_ids.append(fid)
        if posixpath.basename(f.path) == "go.mod":
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES(?, ?)",
                ("gomod:" + posixpath.dirname(f.path), go_module_of(f.content)),
            )
        if ex is None:
            continue
        _insert_extraction(conn, fid, f.content, ex)
        affected_names.update(d.name for d in ex.definitions)
    for p in deleted_paths:
        if posixpath.basename(p) == "go.mod" and p not in incoming:
            conn.execute("DELETE FROM meta WHERE key = ?", ("gomod:" + posixpath.dirname(p),))

    if not indexed:
        add_indexes(conn)
    changed_imports = _resolve_imports(conn)
    ctx = _call_context(conn)
    if replace_all:
        call_rows = conn.execute("SELECT id, file_id, caller, callee, receiver FROM calls").fetchall()
    else:
        redo_files = set(new_file_ids) | changed_imports
        call_rows = _calls_to_redo(conn, redo_files, affected_names)
    _resolve_calls(conn, ctx, call_rows)
    if carry is None:
        compute_centrality(conn)
    else:
        carry.write(conn, new_file_ids)
    stats.files_with_errors = conn.execute("SELECT count(*) FROM files WHERE error_count > 0").fetchone()[0]
    stats.definitions = conn.execute("SELECT count(*) FROM defs").fetchone()[0]
    return stats


def _insert_extraction(conn: sqlite3.Connection, fid: int, content: bytes, ex: Extraction) -> None:
    qname_to_id: dict[str, int] = {}
    for d in (
        ex.definitions if ex.symbols else []
    ):  # docs and config: sections cut chunks, they are not symbols
        cur = conn.execute(
            "INSERT INTO defs(file_id, name, qname, kind, start_line, end_line, signature, parent)"
            " VALUES(?,?,?,?,?,?,?,?)",
            (fid, d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.signature, d.parent),
        )
        qname_to_id.setdefault(d.qualified_name, int(cur.lastrowid or 0))
    if ex.calls:
        lines = content.split(b"\n")
        conn.executemany(
            "INSERT INTO calls(file_id, caller_id, caller, callee, receiver, line, snippet) VALUES(?,?,?,?,?,?,?)",
            [
                (
                    fid,
                    qname_to_id.get(c.enclosing),
                    c.enclosing,
                    c.callee,
                    c.receiver,
                    c.line,
                    lines[c.line - 1].decode("utf-8", "replace").strip()[:MAX_SNIPPET_CHARS]
                    if c.line - 1 < len(lines)
                    else "",
                )
                for c in ex.calls
            ],
        )
    rows = []
    for imp in ex.imports:
        if imp.names:
            for i, name in enumerate(imp.names):
                alias = imp.aliases[i] if i < len(imp.aliases) else ""
                rows.append((fid, imp.module, imp.line, imp.level, name, alias, imp.kind))
        else:
            rows.append((fid, imp.module, imp.line, imp.level, "", imp.alias, imp.kind))
    conn.executemany(
        "INSERT INTO imports(file_id, module, line, level, name, alias, kind) VALUES(?,?,?,?,?,?,?)", rows
    )


def _file_index(conn: sqlite3.Connection) -> FileIndex:
    go_mods = {
        k[len("gomod:") :]: v
        for k, v in conn.execute("SELECT key, value FROM meta WHERE key LIKE 'gomod:%'")
        if v
    }
    return FileIndex(conn.execute("SELECT id, path, language FROM files"), go_mods)


def _resolve_imports(conn: sqlite3.Connection) -> set[int]:
    """Re-resolves every import (cheap: dictionary lookups); returns files whose import targets changed."""
    index = _file_index(conn)
    changed: set[int] = set()
    updates: list[tuple[int | None, int]] = []
    extra: list[tuple] = []
    rows = conn.execute(
        "SELECT id, file_id, module, line, level, name, alias, kind, target_file_id FROM imports ORDER BY id"
    ).fetchall()
    seen: set[tuple[int, int, str, str]] = set()
    for iid, fid, module, line, level, name, alias, kind, old_target in rows:
        key = (fid, line, module, name)
        if key in seen:  # extra rows of a multi-target import are rebuilt from the first one
            conn.execute("DELETE FROM imports WHERE id = ?", (iid,))
            continue
        seen.add(key)
        row = ImportRow(fid, module, line, level, name, alias, kind)
        targets = [
            t for t in index.resolve(index.language.get(fid, ""), index.path_of.get(fid, ""), row) if t != fid
        ]
        first = targets[0] if targets else None
        if first != old_target:
            changed.add(fid)
        updates.append((first, iid))
        if len(targets) > 1:
            extra += [(fid, module, line, level, name, alias, kind, t) for t in targets[1:]]
    conn.executemany("UPDATE imports SET target_file_id = ? WHERE id = ?", updates)
    if extra:
        conn.executemany(
            "INSERT INTO imports(file_id, module, line, level, name, alias, kind, target_file_id)"
            " VALUES(?,?,?,?,?,?,?,?)",
            extra,
        )
    return changed


def _call_context(conn: sqlite3.Connection) -> CallContext:
    ctx = CallContext()
    # Constants are not called; leaving them out keeps `X()` from linking to an UPPER_CASE alias.
    for did, fid, name, qname, parent, kind in conn.execute(
        "SELECT id, file_id, name, qname, parent, kind FROM defs WHERE kind != 'constant' ORDER BY id"
    ):
        ctx.by_name[name].append(DefInfo(did, fid, qname, parent, kind))
    for fid, path in conn.execute("SELECT id, path FROM files"):
        ctx.dir_of[fid] = posixpath.dirname(path)
    for fid, module, line, level, name, alias, kind, target in conn.execute(
        "SELECT file_id, module, line, level, name, alias, kind, target_file_id FROM imports"
        " WHERE target_file_id IS NOT NULL"
    ):
        ctx.add_import(fid, ImportRow(fid, module, line, level, name, alias, kind), target)
    return ctx


def _calls_to_redo(conn: sqlite3.Connection, file_ids: set[int], names: set[str]) -> list[tuple]:
    rows: dict[int, tuple] = {}
    ids = list(file_ids)
    for chunk, marks in in_batches(ids):
        q = f"SELECT id, file_id, caller, callee, receiver FROM calls WHERE file_id IN ({marks})"
        for r in conn.execute(q, chunk):
            rows[r[0]] = r
    nl = list(names)
    for name_part, marks in in_batches(nl):
        q = f"SELECT id, file_id, caller, callee, receiver FROM calls WHERE callee IN ({marks})"
        for r in conn.execute(q, name_part):
            rows[r[0]] = r
    return list(rows.values())


def _resolve_calls(conn: sqlite3.Connection, ctx: CallContext, rows: list[tuple]) -> None:
    ids = [r[0] for r in rows]
    for chunk, marks in in_batches(ids):
        conn.execute(f"DELETE FROM call_targets WHERE call_id IN ({marks})", chunk)
    targets: list[tuple[int, int]] = []
    counts: list[tuple[int, int]] = []
    for cid, fid, caller, callee, receiver in rows:
        found = resolve_call(ctx, fid, caller, callee, receiver)
        counts.append((len(found), cid))
        targets += [(cid, d) for d in found[:MAX_EDGE_FANOUT]]
    conn.executemany("UPDATE calls SET candidates = ? WHERE id = ?", counts)
    conn.executemany("INSERT OR IGNORE INTO call_targets(call_id, def_id) VALUES(?,?)", targets)
