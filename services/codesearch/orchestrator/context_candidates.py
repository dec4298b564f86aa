"""BuildContext's candidates: each seed's head and body, and the three expansion stages around the best seeds
(neighbours, breadcrumbs, graph), each a scored line range for the packer (packing.py).

A candidate's score is its seed's score times a decay below 1, so a seed always outranks its expansions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypedDict

import grpc

from codesearch.common.text import PROSE_STOPWORDS, ascii_words
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.packing import Candidate, FileText
from codesearch.v1 import common_pb2, graph_pb2

SEED_HEAD_LINES = 12  # signature plus docstring opening of a seed: enough to tell what it is
SEED_BODY_DECAY = 0.5  # the rest of a seed competes with the heads of seeds about half as good
FULL_SEEDS = 1  # the best hit enters whole: it is most often the answer, and an agent wants all of it
MIN_WORD_CHARS = 3  # shorter words ("a", "of", "is") say nothing about where a match is

NEIGHBOR_LINES_BEFORE = 4  # decorators and the comment above a definition
NEIGHBOR_LINES_AFTER = 10  # the code that follows a seed, often the rest of its block
BREADCRUMB_HEADER_LINES = 4  # class line, base classes and the docstring's first line
MODULE_HEADER_LINES = 8  # module docstring and the first imports of a top-level seed's file
MAX_SIBLINGS = 6  # sibling signatures per seed: an outline, not a listing
GRAPH_DEF_LINES = 12  # head of a called or calling definition: signature and docstring
MAX_GRAPH_DEFS = 4  # called/calling definitions per seed
MAX_IMPORTS = 3  # imported definitions per seed (signature line only)
NEIGHBOR_QUERY_LIMIT = 60  # graph Neighbors answers siblings before imports; ask enough to reach them
PARENT_LOOKUP_LIMIT = (
    10  # definitions sharing the enclosing class name; the one in the seed file is among them
)

# Score of an expansion = seed score x decay x RANK_DECAY^rank; all below 1 so a seed outranks its expansions.
DECAYS = {
    "neighbor": 0.45,
    "breadcrumb": 0.40,
    "calls": 0.35,
    "called_by": 0.30,
    "imports": 0.20,
}
RANK_DECAY = 0.8  # the n-th sibling or callee of a seed matters less than the first
GRAPH_TIMEOUT_S = 2.0  # graph lookups are an extra; a slow graph leg is skipped, not waited for

FileLookup = Callable[
    [str, str], "FileText | None"
]  # (repository, path) -> the file as read, None if unreadable


class _Where(TypedDict):
    """The Candidate fields that a seed's or an expansion's candidates share."""

    repository: str
    path: str
    reason: str
    stage: str


class _SeedWhere(_Where):
    seed_index: int


def query_words(query: str) -> set[str]:
    return {w for w in ascii_words(query) if len(w) >= MIN_WORD_CHARS and w not in PROSE_STOPWORDS}


def focus_start(text: FileText | None, start: int, end: int, words: set[str]) -> int:
    """First line of the SEED_HEAD_LINES window of start..end that shares the most query words (start on ties)."""
    if text is None or not words or end - start + 1 <= SEED_HEAD_LINES:
        return start
    end = min(end, len(text.lines))
    counts = [len(words & set(ascii_words(text.lines[n - 1]))) for n in range(start, end + 1)]
    best, best_at = sum(counts[:SEED_HEAD_LINES]), start
    window = best
    for i in range(SEED_HEAD_LINES, len(counts)):
        window += counts[i] - counts[i - SEED_HEAD_LINES]
        if window > best:
            best, best_at = window, start + i - SEED_HEAD_LINES + 1
    return best_at


def seed_candidates(hits: list[common_pb2.Hit], files: FileLookup, query: str) -> list[Candidate]:
    """The best FULL_SEEDS seeds whole; the others as a head (the window that matches the query best) + body."""
    words = query_words(query)
    out = []
    for i, h in enumerate(hits):
        loc = h.location
        end = max(loc.end_line, loc.start_line)
        common: _SeedWhere = {
            "repository": loc.repository,
            "path": loc.path,
            "reason": "seed",
            "stage": "seed",
            "seed_index": i,
        }
        if i < FULL_SEEDS:
            out.append(Candidate(start=loc.start_line, end=end, score=h.score, **common))
            continue
        if h.match_lines:
            head_start = max(loc.start_line, min(h.match_lines) - SEED_HEAD_LINES // 2)
        else:
            head_start = focus_start(files(loc.repository, loc.path), loc.start_line, end, words)
        head_end = min(end, head_start + SEED_HEAD_LINES - 1)
        out.append(Candidate(start=head_start, end=head_end, score=h.score, **common))
        if end > head_end or head_start > loc.start_line:
            out.append(Candidate(start=loc.start_line, end=end, score=h.score * SEED_BODY_DECAY, **common))
    return out


def neighbor_candidates(i: int, h: common_pb2.Hit) -> list[Candidate]:
    loc = h.location
    end = max(loc.end_line, loc.start_line)
    score = h.score * DECAYS["neighbor"]
    origin = (loc.start_line, end)
    common: _Where = {
        "repository": loc.repository,
        "path": loc.path,
        "reason": "neighbor",
        "stage": "neighbors",
    }
    out = []
    if loc.start_line > 1:
        out.append(
            Candidate(start=max(1, loc.start_line - NEIGHBOR_LINES_BEFORE), end=loc.start_line - 1, score=score,
                      expanded_from=origin, keep_tail=True, seed_index=i, **common)
        )  # fmt: skip
    out.append(
        Candidate(start=end + 1, end=end + NEIGHBOR_LINES_AFTER, score=score * RANK_DECAY,
                  expanded_from=origin, seed_index=i, **common)
    )  # fmt: skip
    return out


async def graph_candidates(
    legs: LegClients,
    seeds: list[tuple[int, common_pb2.Hit]],
    breadcrumbs: bool,
    graph: bool,
) -> tuple[list[Candidate], bool]:
    """Breadcrumb and call/import candidates from graph Neighbors; (candidates, graph leg failed)."""
    if legs.graph is None:
        return [], True
    graph_stub = legs.graph
    degraded = False

    async def neighbors(h: common_pb2.Hit) -> list[graph_pb2.Neighbor]:
        nonlocal degraded
        loc = h.location
        req = graph_pb2.NeighborsRequest(
            location=common_pb2.Location(
                repository=loc.repository, path=loc.path, start_line=loc.start_line,
                end_line=max(loc.end_line, loc.start_line),
            ),
            limit=NEIGHBOR_QUERY_LIMIT,
        )  # fmt: skip
        try:
            return list((await graph_stub.Neighbors(req, timeout=GRAPH_TIMEOUT_S)).neighbors)
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.NOT_FOUND:  # a repository without a graph is not a failure
                degraded = True
            return []

    async def parent(h: common_pb2.Hit, qualified: str) -> graph_pb2.Symbol | None:
        nonlocal degraded
        loc = h.location
        try:
            resp = await graph_stub.FindDefinitions(
                graph_pb2.FindDefinitionsRequest(
                    repositories=[loc.repository], name=qualified, limit=PARENT_LOOKUP_LIMIT
                ),
                timeout=GRAPH_TIMEOUT_S,
            )
        except grpc.aio.AioRpcError:
            degraded = True
            return None
        for s in resp.symbols:
            sl = s.location
            if sl.path == loc.path and sl.start_line <= loc.start_line and sl.end_line >= loc.end_line:
                return s
        return None

    found = await asyncio.gather(*(neighbors(h) for _, h in seeds))
    out: list[Candidate] = []
    parent_asks: list[tuple[int, common_pb2.Hit, str]] = []
    for (i, h), nbrs in zip(seeds, found, strict=True):
        loc = h.location
        origin = (loc.start_line, max(loc.end_line, loc.start_line))
        ranks: dict[str, int] = {}

        def add(sym: graph_pb2.Symbol, reason: str, stage: str, lines: int, i: int = i, h: common_pb2.Hit = h,
                origin: tuple[int, int] = origin, ranks: dict[str, int] = ranks) -> None:  # fmt: skip
            rank = ranks.get(reason, 0)
            ranks[reason] = rank + 1
            sl = sym.location
            out.append(
                Candidate(
                    repository=sl.repository or h.location.repository, path=sl.path, start=sl.start_line,
                    end=min(max(sl.end_line, sl.start_line), sl.start_line + lines - 1),
                    score=h.score * DECAYS[reason] * RANK_DECAY**rank, reason=reason, stage=stage,
                    expanded_from=origin, seed_index=i,
                )
            )  # fmt: skip

        enclosing = next((n.symbol for n in nbrs if n.relation == "enclosing"), None)
        if breadcrumbs:
            if (
                enclosing is not None and enclosing.location.start_line < loc.start_line
            ):  # the seed is inside it
                add(enclosing, "breadcrumb", "breadcrumbs", BREADCRUMB_HEADER_LINES)
            elif enclosing is not None and enclosing.parent:
                parent_asks.append((i, h, enclosing.parent))
            elif loc.start_line > 1:
                header = graph_pb2.Symbol(
                    location=common_pb2.Location(repository=loc.repository, path=loc.path, start_line=1,
                                                 end_line=MODULE_HEADER_LINES))  # fmt: skip
                add(header, "breadcrumb", "breadcrumbs", MODULE_HEADER_LINES)
            for n in [n for n in nbrs if n.relation == "sibling"][:MAX_SIBLINGS]:
                add(n.symbol, "breadcrumb", "breadcrumbs", 1)
        if graph:
            for relation in ("calls", "called_by"):
                for n in [n for n in nbrs if n.relation == relation][:MAX_GRAPH_DEFS]:
                    add(n.symbol, relation, "graph", GRAPH_DEF_LINES)
            for n in [n for n in nbrs if n.relation == "imports"][:MAX_IMPORTS]:
                add(n.symbol, "imports", "graph", 1)

    parents = await asyncio.gather(*(parent(h, q) for _, h, q in parent_asks))
    for (i, h, _q), sym in zip(parent_asks, parents, strict=True):
        if sym is None:
            continue
        loc = h.location
        sl = sym.location
        out.append(
            Candidate(
                repository=loc.repository, path=loc.path, start=sl.start_line,
                end=min(sl.end_line, sl.start_line + BREADCRUMB_HEADER_LINES - 1), score=h.score * DECAYS["breadcrumb"],
                reason="breadcrumb", stage="breadcrumbs", expanded_from=(loc.start_line, max(loc.end_line, loc.start_line)),
                seed_index=i,
            )
        )  # fmt: skip
    return out, degraded
