"""A generation's centrality scores: full PageRank over its call and import graph, or, for a small update, the
previous generation's scores carried over to the rows it replaces (graph/centrality.py has the algorithm)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from codesearch.common.sqlite_batches import in_batches
from codesearch.graph.centrality import pagerank
from codesearch.graph.resolve import MAX_EDGE_FANOUT

# Centrality is only a ranking tie-breaker (a boost of at most 1.5x), so a slightly stale PageRank is acceptable:
# an update touching at most this fraction of the repository's files keeps the previous generation's scores for
# unchanged nodes and gives the replaced nodes their old score (or the mean, 1.0, for new ones). Full PageRank
# took 0.7-1.5 s of the 1.1-2.3 s one-file update on the stdlib (codesearch_lab.bench.graph_update: the ratio).
SMALL_UPDATE_FRACTION = 0.01
# Files touched since the last full PageRank after which it is recomputed even for a small update: by then up to
# 5% of the graph's nodes carry a carried-over score, and the recomputation is amortised over many saves.
STALE_FRACTION_LIMIT = 0.05
STALE_FILES_KEY = "centrality_stale_files"  # meta: files touched since the last full PageRank
NEW_NODE_PRIOR = 1.0  # scores are normalised to mean 1, so a node never ranked gets the average


def compute_centrality(conn: sqlite3.Connection) -> None:
    """PageRank over files and definitions: caller -> callee (weight 1/candidates), importer -> imported file.
    Every score is fresh afterwards, so the count of files carried over restarts at 0."""
    file_ids = [r[0] for r in conn.execute("SELECT id FROM files ORDER BY id")]
    def_ids = [r[0] for r in conn.execute("SELECT id FROM defs ORDER BY id")]
    fnode = {fid: i for i, fid in enumerate(file_ids)}
    dnode = {did: len(file_ids) + i for i, did in enumerate(def_ids)}
    edges: dict[tuple[int, int], float] = {}
    for file_id, caller_id, def_id, candidates in conn.execute(
        "SELECT c.file_id, c.caller_id, t.def_id, c.candidates FROM call_targets t JOIN calls c ON c.id = t.call_id"
    ):
        src = dnode.get(caller_id) if caller_id is not None else fnode.get(file_id)
        dst = dnode.get(def_id)
        if src is None or dst is None:
            continue
        key = (src, dst)
        edges[key] = edges.get(key, 0.0) + 1.0 / max(1, min(candidates, MAX_EDGE_FANOUT))
    for file_id, target in conn.execute(
        "SELECT DISTINCT file_id, target_file_id FROM imports WHERE target_file_id IS NOT NULL"
    ):
        a, b = fnode.get(file_id), fnode.get(target)
        if a is not None and b is not None:
            edges[(a, b)] = edges.get((a, b), 0.0) + 1.0
    scores = pagerank(len(file_ids) + len(def_ids), edges)
    conn.executemany(
        "UPDATE files SET centrality = ? WHERE id = ?", [(scores[fnode[f]], f) for f in file_ids]
    )
    conn.executemany("UPDATE defs SET centrality = ? WHERE id = ?", [(scores[dnode[d]], d) for d in def_ids])
    conn.execute("INSERT OR REPLACE INTO meta VALUES(?, '0')", (STALE_FILES_KEY,))


@dataclass
class CarriedCentrality:
    """Scores of the files an update replaces, by path and by (path, qualified name), to give their new rows."""

    stale_files: int
    files: dict[str, float] = field(default_factory=dict)
    defs: dict[tuple[str, str], float] = field(default_factory=dict)

    def read(self, conn: sqlite3.Connection, file_ids: list[int]) -> None:
        for chunk, marks in in_batches(file_ids):
            for path, score in conn.execute(
                f"SELECT path, centrality FROM files WHERE id IN ({marks})", chunk
            ):
                self.files[path] = score
            for path, qname, score in conn.execute(
                f"SELECT f.path, d.qname, d.centrality FROM defs d JOIN files f ON f.id = d.file_id"
                f" WHERE d.file_id IN ({marks})",
                chunk,
            ):
                self.defs.setdefault((path, qname), score)

    def write(self, conn: sqlite3.Connection, file_ids: list[int]) -> None:
        for chunk, marks in in_batches(file_ids):
            rows = conn.execute(f"SELECT id, path FROM files WHERE id IN ({marks})", chunk).fetchall()
            conn.executemany(
                "UPDATE files SET centrality = ? WHERE id = ?",
                [(self.files.get(path, NEW_NODE_PRIOR), fid) for fid, path in rows],
            )
            defs = conn.execute(
                f"SELECT d.id, f.path, d.qname FROM defs d JOIN files f ON f.id = d.file_id"
                f" WHERE d.file_id IN ({marks})",
                chunk,
            ).fetchall()
            conn.executemany(
                "UPDATE defs SET centrality = ? WHERE id = ?",
                [(self.defs.get((path, qname), NEW_NODE_PRIOR), did) for did, path, qname in defs],
            )
        conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (STALE_FILES_KEY, str(self.stale_files)))


def carry_over_centrality(
    conn: sqlite3.Connection, repo_files: int, touched: int
) -> CarriedCentrality | None:
    """A carrier of the previous scores when this update is small and staleness is within its limit, else None
    (recompute PageRank)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (STALE_FILES_KEY,)).fetchone()
    if row is None:  # a generation written before the marker existed: its scores' age is unknown
        return None
    stale = int(row[0]) + touched
    if touched > repo_files * SMALL_UPDATE_FRACTION or stale > repo_files * STALE_FRACTION_LIMIT:
        return None
    return CarriedCentrality(stale)
