"""Read side of one repository's graph database: lookups that answer the GraphService RPCs."""

from __future__ import annotations

import difflib
import sqlite3
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple, cast

from codesearch.v1 import common_pb2, graph_pb2

R = graph_pb2  # enum and message namespace
# Kinds people usually mean when they ask for a name: types and functions before methods and constants.
KIND_WEIGHT = {
    "class": 1.5, "struct": 1.5, "interface": 1.5, "trait": 1.5, "enum": 1.3, "function": 1.3,
    "type_alias": 1.1, "method": 1.0, "module": 0.9, "constant": 0.8,
}  # fmt: skip
FUZZY_CUTOFF = 0.75  # difflib ratio below this is a different name, not a typo
FUZZY_MAX_NAMES = 20  # distinct names a fuzzy lookup expands to
MAX_TARGETS = 200  # definitions a name may resolve to before we stop expanding it
DEF_COLS = "d.id, d.name, d.qname, d.kind, d.start_line, d.end_line, d.signature, d.parent, d.centrality, f.path, f.language"


class CallSite(NamedTuple):
    """One row of the call-site query in `references`."""

    id: int
    line: int
    callee: str
    receiver: str
    caller: str
    snippet: str
    candidates: int
    path: str
    centrality: float
    target_ids: str | None  # comma-separated def ids the call resolved to


@dataclass(slots=True)
class DefRow:
    id: int
    name: str
    qname: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent: str
    centrality: float
    path: str
    language: str

    def score(self) -> float:
        return self.centrality * KIND_WEIGHT.get(self.kind, 1.0)


def kind_name(kind: int) -> str:
    return R.SymbolKind.Name(kind).removeprefix("SYMBOL_KIND_").lower() if kind else ""


def kind_enum(kind: str) -> R.SymbolKind:
    try:
        # types-protobuf's EnumTypeWrapper.Value returns int; the value is one of SymbolKind's.
        return cast(R.SymbolKind, R.SymbolKind.Value("SYMBOL_KIND_" + kind.upper()))
    except ValueError:
        return R.SYMBOL_KIND_UNSPECIFIED


class GraphReader:
    """Queries over one committed generation; safe to share between threads."""

    def __init__(self, repository: str, conn: sqlite3.Connection) -> None:
        self.repository = repository
        self.conn = conn
        self._lock = threading.Lock()

    def _q(self, sql: str, args: tuple | list = ()) -> list[tuple]:
        with self._lock:
            return self.conn.execute(sql, args).fetchall()

    def symbol(self, d: DefRow) -> graph_pb2.Symbol:
        return graph_pb2.Symbol(
            name=d.name,
            qualified_name=d.qname,
            kind=kind_enum(d.kind),
            location=common_pb2.Location(
                repository=self.repository, path=d.path, start_line=d.start_line, end_line=d.end_line
            ),
            signature=d.signature,
            parent=d.parent,
            language=d.language,
            centrality=d.centrality,
        )

    def _defs(self, where: str, args: tuple | list) -> list[DefRow]:
        rows = self._q(f"SELECT {DEF_COLS} FROM defs d JOIN files f ON f.id = d.file_id WHERE {where}", args)
        return [DefRow(*r) for r in rows]

    # --- name lookup ----------------------------------------------------------------------------------------
    def lookup(
        self, name: str, kind: str = "", language: str = "", fuzzy: bool = True
    ) -> tuple[R.Resolution, list[DefRow]]:
        """(Resolution, definitions best first). Qualified names ("A.f", "A::f", "pkg.A.f") match by suffix."""
        name = name.strip().replace("::", ".").replace("#", ".").replace("->", ".")
        short = name.rsplit(".", 1)[-1]
        found: list[DefRow] = []
        resolution = R.RESOLUTION_NOT_FOUND

        def keep(rows: list[DefRow]) -> list[DefRow]:
            out = [
                d for d in rows if (not kind or d.kind == kind) and (not language or d.language == language)
            ]
            if "." in name:
                out = [d for d in out if d.qname == name or d.qname.endswith("." + name)
                       or f"{d.path.rsplit('.', 1)[0].replace('/', '.')}.{d.qname}".endswith(name)]  # fmt: skip
            return out

        found = keep(self._defs("d.name = ?", (short,)))
        if found:
            resolution = R.RESOLUTION_EXACT if len(found) == 1 else R.RESOLUTION_AMBIGUOUS
        else:
            lowered = name.lower()
            found = [
                d
                for d in keep(self._defs("lower(d.name) = ?", (short.lower(),)))
                if "." not in name or d.qname.lower().endswith(lowered)
            ]
            if not found and "." in name:
                found = keep(self._defs("lower(d.name) = ?", (short.lower(),)))
            if found:
                resolution = R.RESOLUTION_CASE_INSENSITIVE
            elif fuzzy:
                found = keep(self._fuzzy(short))
                if found:
                    resolution = R.RESOLUTION_FUZZY
        found.sort(key=lambda d: (-d.score(), d.path, d.start_line))
        return resolution, found[:MAX_TARGETS]

    def _fuzzy(self, short: str) -> list[DefRow]:
        low = short.lower()
        names = [r[0] for r in self._q("SELECT DISTINCT name FROM defs WHERE lower(name) LIKE ? LIMIT ?",
                                       (f"%{low}%", FUZZY_MAX_NAMES))]  # fmt: skip
        if not names and len(low) >= 3:
            pool = [
                r[0]
                for r in self._q(
                    "SELECT DISTINCT name FROM defs WHERE lower(substr(name, 1, 1)) = ?", (low[0],)
                )
            ]
            names = difflib.get_close_matches(short, pool, n=FUZZY_MAX_NAMES, cutoff=FUZZY_CUTOFF)
        if not names:
            return []
        return self._defs(f"d.name IN ({','.join('?' * len(names))})", names)

    # --- references and callees -----------------------------------------------------------------------------
    def references(
        self, name: str, limit: int
    ) -> tuple[R.Resolution, list[DefRow], list[tuple[float, graph_pb2.Reference]]]:
        """Call sites of a name: (resolution, targets, [(caller centrality, reference)]) grouped by file."""
        resolution, targets = self.lookup(name, fuzzy=False)
        short = name.strip().replace("::", ".").rsplit(".", 1)[-1]
        target_ids = {d.id for d in targets}
        qualified = "." in name.replace("::", ".")
        if qualified and not targets:
            return R.RESOLUTION_NOT_FOUND, [], []
        args: list[int] | list[str]
        if qualified:
            marks = ",".join("?" * len(target_ids))
            where, args = (
                f"c.id IN (SELECT call_id FROM call_targets WHERE def_id IN ({marks}))",
                list(target_ids),
            )
        else:
            # A case-insensitive hit means the calls use the definitions' spelling.
            names = sorted({d.name for d in targets}) or [short]
            where, args = f"c.callee IN ({','.join('?' * len(names))})", names
        rows = [
            CallSite(*r)
            for r in self._q(
                "SELECT c.id, c.line, c.callee, c.receiver, c.caller, c.snippet, c.candidates, f.path,"
                " COALESCE(d.centrality, f.centrality),"
                " (SELECT group_concat(t.def_id) FROM call_targets t WHERE t.call_id = c.id)"
                f" FROM calls c JOIN files f ON f.id = c.file_id LEFT JOIN defs d ON d.id = c.caller_id WHERE {where}",
                args,
            )
        ]
        if not rows and not targets:
            return R.RESOLUTION_NOT_FOUND, [], []
        if not targets:
            resolution = (
                R.RESOLUTION_AMBIGUOUS
            )  # called but not defined in the repository (library or builtin)
        by_file: dict[str, list[CallSite]] = defaultdict(list)
        for r in rows:
            by_file[r.path].append(r)
        ordered = sorted(by_file.items(), key=lambda kv: (-max(x.centrality for x in kv[1]), kv[0]))
        out: list[tuple[float, graph_pb2.Reference]] = []
        for path, calls in ordered:
            for _cid, line, callee, receiver, caller, snippet, candidates, _p, cent, tids in sorted(
                calls, key=lambda x: x.line
            ):
                hit = bool(tids) and bool(target_ids & {int(t) for t in (tids or "").split(",")})
                res = R.RESOLUTION_EXACT if hit and candidates == 1 else R.RESOLUTION_AMBIGUOUS
                out.append((cent, graph_pb2.Reference(
                    location=common_pb2.Location(repository=self.repository, path=path, start_line=line, end_line=line),
                    callee_name=callee, receiver=receiver, caller=caller, snippet=snippet, resolution=res,
                )))  # fmt: skip
                if len(out) >= limit:
                    return resolution, targets, out
        return resolution, targets, out

    def callees(self, name: str, limit: int) -> tuple[R.Resolution, list[DefRow], list[graph_pb2.Reference]]:
        """What the best-matching caller definition calls: (resolution, callee defs in call order, call sites)."""
        resolution, callers = self.lookup(name)
        callers = [d for d in callers if d.kind not in ("constant",)]
        if not callers:
            return R.RESOLUTION_NOT_FOUND, [], []
        caller = callers[0]
        rows = self._q(
            "SELECT c.id, c.line, c.callee, c.receiver, c.caller, c.snippet, c.candidates, f.path,"
            " (SELECT group_concat(t.def_id) FROM call_targets t WHERE t.call_id = c.id)"
            " FROM calls c JOIN files f ON f.id = c.file_id WHERE c.caller_id = ? ORDER BY c.line, c.id",
            (caller.id,),
        )
        calls: list[graph_pb2.Reference] = []
        order: list[int] = []
        for _cid, line, callee, receiver, cname, snippet, candidates, path, tids in rows:
            ids = [int(t) for t in tids.split(",")] if tids else []
            res = (R.RESOLUTION_NOT_FOUND if not ids else R.RESOLUTION_EXACT if candidates == 1
                   else R.RESOLUTION_AMBIGUOUS)  # fmt: skip
            calls.append(graph_pb2.Reference(
                location=common_pb2.Location(repository=self.repository, path=path, start_line=line, end_line=line),
                callee_name=callee, receiver=receiver, caller=cname, snippet=snippet, resolution=res,
            ))  # fmt: skip
            order += [i for i in ids[:1] if i not in order] if candidates == 1 else []
        defs = (
            {d.id: d for d in self._defs(f"d.id IN ({','.join('?' * len(order))})", order)} if order else {}
        )
        return resolution, [defs[i] for i in order if i in defs][:limit], calls[:limit]

    # --- impact ------------------------------------------------------------------------------------------
    def resolve_target(self, target: str) -> tuple[str, list[int], list[str]]:
        """("files", file ids, paths) or ("defs", def ids, qualified names) or ("", [], [])."""
        t = target.strip()
        rows = self._q("SELECT id, path FROM files WHERE path = ?", (t.lstrip("./"),))
        if not rows:
            rows = self._q("SELECT id, path FROM files WHERE module = ? AND module != ''", (t,))
        if not rows and ("/" in t or "." in t):
            stem = t.replace(".", "/") if "/" not in t else t
            rows = self._q(
                "SELECT id, path FROM files WHERE path LIKE ? OR path LIKE ?",
                (stem + ".%", stem + "/index.%"),
            )
        if rows:
            return "files", [r[0] for r in rows], [r[1] for r in rows]
        _res, defs = self.lookup(t, fuzzy=False)
        if defs:
            return "defs", [d.id for d in defs], [d.qname for d in defs]
        return "", [], []

    def impact(
        self, target: str, max_depth: int, limit: int
    ) -> tuple[R.Resolution, list[str], list[graph_pb2.ImpactItem]]:
        kind, ids, names = self.resolve_target(target)
        if not kind:
            return R.RESOLUTION_NOT_FOUND, [], []
        resolution = R.RESOLUTION_EXACT if len(ids) == 1 else R.RESOLUTION_AMBIGUOUS
        items: list[graph_pb2.ImpactItem] = []
        if kind == "files":
            seen = set(ids)
            frontier = list(ids)
            for depth in range(1, max_depth + 1):
                if not frontier or len(items) >= limit:
                    break
                marks = ",".join("?" * len(frontier))
                rows = self._q(
                    "SELECT i.file_id, f.path, min(i.line) FROM imports i JOIN files f ON f.id = i.file_id"
                    f" WHERE i.target_file_id IN ({marks}) GROUP BY i.file_id ORDER BY f.centrality DESC, f.path",
                    frontier,
                )
                frontier = []
                for fid, path, line in rows:
                    if fid in seen:
                        continue
                    seen.add(fid)
                    frontier.append(fid)
                    items.append(self._impact_item(path, line, depth, "imports", ""))
            return resolution, names, items[:limit]
        seen_defs = set(ids)
        seen_sites: set[tuple[str, str]] = set()
        frontier = list(ids)
        for depth in range(1, max_depth + 1):
            if not frontier or len(items) >= limit:
                break
            marks = ",".join("?" * len(frontier))
            rows = self._q(
                "SELECT c.caller_id, c.caller, f.path, min(c.line), max(COALESCE(d.centrality, 0))"
                " FROM call_targets t JOIN calls c ON c.id = t.call_id JOIN files f ON f.id = c.file_id"
                f" LEFT JOIN defs d ON d.id = c.caller_id WHERE t.def_id IN ({marks})"
                " GROUP BY c.file_id, c.caller_id ORDER BY 5 DESC, f.path, 4",
                frontier,
            )
            frontier = []
            for caller_id, caller, path, line, _c in rows:
                key = (path, caller or "")
                if key in seen_sites or (caller_id is not None and caller_id in seen_defs):
                    continue
                seen_sites.add(key)
                if caller_id is not None:
                    seen_defs.add(caller_id)
                    frontier.append(caller_id)
                items.append(self._impact_item(path, line, depth, "calls", caller or ""))
        return resolution, names, items[:limit]

    def _impact_item(self, path: str, line: int, depth: int, via: str, symbol: str) -> graph_pb2.ImpactItem:
        loc = common_pb2.Location(repository=self.repository, path=path, start_line=line, end_line=line)
        return graph_pb2.ImpactItem(location=loc, distance=depth, via=via, symbol=symbol)

    # --- neighbours and centrality --------------------------------------------------------------------------
    def neighbors(self, path: str, start: int, end: int, limit: int) -> list[tuple[DefRow, str]]:
        frow = self._q("SELECT id FROM files WHERE path = ?", (path,))
        if not frow:
            return []
        fid = frow[0][0]
        end = max(end, start)
        inside = self._defs("d.file_id = ? AND d.start_line <= ? AND d.end_line >= ?", (fid, end, start))
        out: list[tuple[DefRow, str]] = []
        seen: set[int] = set()

        def add(rows: list[DefRow], relation: str) -> None:
            for d in rows:
                if d.id not in seen and len(out) < limit:
                    seen.add(d.id)
                    out.append((d, relation))

        # The innermost definition that covers the whole span encloses it; smaller ones are inside it.
        covering = [d for d in inside if d.start_line <= start and d.end_line >= end]
        covering.sort(key=lambda d: d.end_line - d.start_line)
        enclosing = covering[0] if covering else None
        if enclosing is not None:
            add([enclosing], "enclosing")
        focus = [d.id for d in inside if enclosing is None or d.id == enclosing.id
                 or (d.start_line >= enclosing.start_line and d.end_line <= enclosing.end_line)]  # fmt: skip
        seen.update(d.id for d in inside)
        if focus:
            marks = ",".join("?" * len(focus))
            callees = self._defs(
                f"d.id IN (SELECT t.def_id FROM call_targets t JOIN calls c ON c.id = t.call_id"
                f" WHERE c.caller_id IN ({marks}) AND c.candidates = 1)", focus)  # fmt: skip
            add(sorted(callees, key=lambda d: -d.score()), "calls")
            callers = self._defs(
                f"d.id IN (SELECT c.caller_id FROM calls c JOIN call_targets t ON t.call_id = c.id"
                f" WHERE t.def_id IN ({marks}))", focus)  # fmt: skip
            add(sorted(callers, key=lambda d: -d.score()), "called_by")
        if enclosing is not None:
            sibs = self._defs(
                "d.file_id = ? AND d.parent = ? AND d.id != ?", (fid, enclosing.parent, enclosing.id)
            )
            add(sorted(sibs, key=lambda d: abs(d.start_line - start)), "sibling")
        imported = self._defs(
            "d.file_id IN (SELECT target_file_id FROM imports WHERE file_id = ?) AND d.parent = ''", (fid,))  # fmt: skip
        add(sorted(imported, key=lambda d: -d.score()), "imports")
        return out

    def centrality(self, path: str, start: int, end: int) -> float:
        rows = self._q(
            "SELECT max(d.centrality) FROM defs d JOIN files f ON f.id = d.file_id"
            " WHERE f.path = ? AND d.start_line <= ? AND d.end_line >= ?",
            (path, max(start, end), start),
        )
        return float(rows[0][0] or 0.0) if rows else 0.0

    def stats(self) -> tuple[int, int, int, int, int]:
        """(files, definitions, edges, files with parse errors, index_version)."""
        files = self._q("SELECT count(*), sum(error_count > 0) FROM files")[0]
        defs = self._q("SELECT count(*) FROM defs")[0][0]
        edges = self._q("SELECT (SELECT count(*) FROM call_targets) + (SELECT count(*) FROM imports WHERE target_file_id IS NOT NULL)")[0][0]  # fmt: skip
        ver = self._q("SELECT value FROM meta WHERE key = 'index_version'")
        return int(files[0]), int(defs), int(edges), int(files[1] or 0), int(ver[0][0]) if ver else 0
