"""BuildContext: the code that answers a question, with what surrounds it and what it depends on, in a budget.

Seeds are the hits of a routed Search. Three expansion stages add candidates, each with its own share of the
budget and a score decay relative to the seed it came from, so expansions never drown the seeds:
  neighbours  - lines just before and after a seed (decorators, comments, the rest of the block),
  breadcrumbs - the enclosing class or module header and the signatures of sibling definitions,
  graph       - definitions the seed calls or imports, and the definitions that call it.
Every candidate is a line range; the packer (packing.py) merges, trims and keeps the budget exactly.
Seeds enter as a head (signature and docstring) at the seed's score and a body at a decayed score, so a small
budget holds the heads of many seeds before the full body of one.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from codesearch.common.errors import check_query, failed_precondition, invalid
from codesearch.common.text import PROSE_STOPWORDS, ascii_words
from codesearch.config import MAX_QUERY_CHARS
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.packing import DEFAULT_MAX_SEGMENTS, Candidate, FileText, Packer, render
from codesearch.orchestrator.search import SearchPipeline
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, search_pb2

MIN_BUDGET = 500  # below this not even one definition fits; per the proto
MAX_BUDGET = 200_000  # per the proto: about 50k tokens, more than an agent should spend on one question
MAX_SEGMENTS_LIMIT = 64  # options.max_segments_per_file above this is a mistake, not a preference

SEED_LIMIT = 30  # Search hits asked for: a 16k budget holds the heads of about this many definitions
SEED_HEAD_LINES = 12  # signature plus docstring opening of a seed: enough to tell what it is
SEED_BODY_DECAY = 0.5  # the rest of a seed competes with the heads of seeds about half as good
FULL_SEEDS = 1  # the best hit enters whole: it is most often the answer, and an agent wants all of it
MIN_WORD_CHARS = 3  # shorter words ("a", "of", "is") say nothing about where a match is
EXPAND_SEEDS = 6  # expand only the best seeds; the expansions of lower ones would decay below any seed

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

# Shares of the budget each expansion stage may use at most; seeds may use all of it.
STAGE_SHARES = {"neighbors": 0.15, "breadcrumbs": 0.10, "graph": 0.20}
# Score of an expansion = seed score x decay x RANK_DECAY^rank; all below 1 so a seed outranks its expansions.
DECAYS = {
    "neighbor": 0.45,
    "breadcrumb": 0.40,
    "calls": 0.35,
    "called_by": 0.30,
    "imports": 0.20,
}
RANK_DECAY = 0.8  # the n-th sibling or callee of a seed matters less than the first
# When the seeds leave budget unused (few hits), expansions may fill it past their shares, best first.
SPILL_UNUSED = True
STAGE_ORDER = {"seed": 0, "neighbors": 1, "breadcrumbs": 2, "graph": 3}  # ties: seeds first

READ_TIMEOUT_S = 5.0  # reading an indexed file is local and takes milliseconds
GRAPH_TIMEOUT_S = 2.0  # graph lookups are an extra; a slow graph leg is skipped, not waited for


class FileStore:
    """Whole files read once per request from the keyword leg's copy (the same bytes that were indexed)."""

    def __init__(self, legs: LegClients) -> None:
        self.legs = legs
        self.files: dict[tuple[str, str], FileText | None] = {}
        self.failed = 0

    async def load(self, keys: set[tuple[str, str]]) -> None:
        missing = [k for k in keys if k not in self.files]
        results = await asyncio.gather(*(self._read(r, p) for r, p in missing))
        for key, text in zip(missing, results, strict=True):
            self.files[key] = text

    async def _read(self, repository: str, path: str) -> FileText | None:
        assert self.legs.keyword is not None
        try:
            resp = await self.legs.keyword.ReadFile(
                keyword_pb2.ReadFileRequest(repository=repository, path=path), timeout=READ_TIMEOUT_S
            )
        except grpc.aio.AioRpcError:
            self.failed += 1  # deleted since the search, or the leg is down: the pack goes on without it
            return None
        return FileText.from_text(repository, path, resp.language, resp.text)

    def get(self, repository: str, path: str) -> FileText | None:
        return self.files.get((repository, path))


def check_request(request: search_pb2.BuildContextRequest) -> tuple[str, int, int]:
    query = check_query(request.query, MAX_QUERY_CHARS)
    budget = request.budget_chars
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise invalid(f"budget_chars must be between {MIN_BUDGET} and {MAX_BUDGET}, got {budget}")
    segments = request.options.max_segments_per_file
    if segments < 0 or segments > MAX_SEGMENTS_LIMIT:
        raise invalid(f"max_segments_per_file must be between 0 and {MAX_SEGMENTS_LIMIT}, got {segments}")
    return query, budget, segments or DEFAULT_MAX_SEGMENTS


async def build_context(
    pipeline: SearchPipeline,
    legs: LegClients,
    request: search_pb2.BuildContextRequest,
    time_remaining: float | None,
) -> search_pb2.BuildContextResponse:
    started = time.perf_counter()
    query, budget, max_segments = check_request(request)
    opts = request.options
    debug: dict[str, float] = {}

    t = time.perf_counter()
    found = await pipeline.search(
        search_pb2.SearchRequest(query=query, repositories=list(request.repositories), limit=SEED_LIMIT),
        time_remaining,
    )
    debug["search_ms"] = _ms(t)
    for w in found.weights:
        debug[f"weight_{w.modality}"] = w.weight
    if legs.keyword is None:
        raise failed_precondition(
            "BuildContext needs the keyword service to read files; it is not configured"
        )

    hits = list(found.hits)
    store = FileStore(legs)
    t = time.perf_counter()
    await store.load({(h.location.repository, h.location.path) for h in hits})
    debug["read_ms"] = _ms(t)

    candidates = seed_candidates(hits, store, query)
    top = [
        (i, h) for i, h in enumerate(hits[:EXPAND_SEEDS]) if store.get(h.location.repository, h.location.path)
    ]
    if not opts.no_neighbors:
        t = time.perf_counter()
        for i, h in top:
            candidates.extend(neighbor_candidates(i, h))
        debug["neighbors_ms"] = _ms(t)
    if not (opts.no_breadcrumbs and opts.no_graph):
        t = time.perf_counter()
        extra, degraded = await graph_candidates(legs, top, store, not opts.no_breadcrumbs, not opts.no_graph)
        candidates.extend(extra)
        if degraded:
            debug["degraded_graph"] = 1.0
        debug["graph_ms"] = _ms(t)
        t = time.perf_counter()
        await store.load({(c.repository, c.path) for c in extra})
        debug["read_ms"] += _ms(t)

    t = time.perf_counter()
    caps = {stage: int(budget * share) for stage, share in STAGE_SHARES.items()}
    packer = Packer(budget, max_segments, caps)
    candidates.sort(key=lambda c: (-c.score, STAGE_ORDER[c.stage], c.seed_index, c.start))
    resp = search_pb2.BuildContextResponse()
    seeds_taken: set[int] = set()
    offers = [(cand, True) for cand in candidates]
    if SPILL_UNUSED:
        offers += [(cand, False) for cand in candidates if cand.stage != "seed"]
    expanded: dict[int, search_pb2.ContextChunk] = {}  # by candidate: a spilled rest extends its first piece
    for cand, capped in offers:
        text = store.get(cand.repository, cand.path)
        if text is None:
            continue
        if not capped:
            packer.stage_caps = {}
        taken = packer.offer(cand, text)
        if taken is None:
            continue
        if cand.stage == "seed":
            seeds_taken.add(cand.seed_index)
            continue
        chunk = expanded.get(id(cand))
        if chunk is None:
            loc = common_pb2.Location(
                repository=cand.repository, path=cand.path, start_line=taken[0], end_line=taken[1]
            )
            chunk = search_pb2.ContextChunk(
                location=loc,
                score=cand.score,
                reason=cand.reason,
                expanded_from=hits[cand.seed_index].location,
            )
            expanded[id(cand)] = chunk
        else:
            chunk.location.start_line = min(chunk.location.start_line, taken[0])
            chunk.location.end_line = max(chunk.location.end_line, taken[1])
    resp.expanded.extend(expanded.values())
    for i in sorted(seeds_taken):
        h = hits[i]
        resp.seeds.append(search_pb2.ContextChunk(location=h.location, score=h.score, reason="seed"))

    files = packer.ordered_files()
    for f in files:
        t_ = f.text
        resp.files.append(
            search_pb2.ContextFile(
                repository=t_.repository,
                path=t_.path,
                language=t_.language,
                segments=[
                    search_pb2.ContextSegment(start_line=s, end_line=e, text=t_.text(s, e))
                    for s, e in f.ranges
                ],
            )
        )
    resp.used_chars = sum(len(seg.text) for f in resp.files for seg in f.segments)
    resp.text = render(files, show_repository=len({f.text.repository for f in files}) > 1)
    debug["pack_ms"] = _ms(t)
    debug["seeds"] = float(len(hits))
    debug["candidates"] = float(len(candidates))
    debug["files_unreadable"] = float(store.failed)
    for stage, used in packer.stage_used.items():
        debug[f"used_{stage}"] = float(used)
    debug["total_ms"] = _ms(started)
    for k, v in debug.items():
        resp.debug[k] = v
    return resp


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


def seed_candidates(hits: list[common_pb2.Hit], store: FileStore, query: str) -> list[Candidate]:
    """The best FULL_SEEDS seeds whole; the others as a head (the window that matches the query best) + body."""
    words = query_words(query)
    out = []
    for i, h in enumerate(hits):
        loc = h.location
        end = max(loc.end_line, loc.start_line)
        common = {
            "repository": loc.repository,
            "path": loc.path,
            "reason": "seed",
            "stage": "seed",
            "seed_index": i,
        }
        if i < FULL_SEEDS:
            out.append(Candidate(start=loc.start_line, end=end, score=h.score, **common))  # type: ignore[arg-type]
            continue
        if h.match_lines:
            head_start = max(loc.start_line, min(h.match_lines) - SEED_HEAD_LINES // 2)
        else:
            head_start = focus_start(store.get(loc.repository, loc.path), loc.start_line, end, words)
        head_end = min(end, head_start + SEED_HEAD_LINES - 1)
        out.append(Candidate(start=head_start, end=head_end, score=h.score, **common))  # type: ignore[arg-type]
        if end > head_end or head_start > loc.start_line:
            out.append(Candidate(start=loc.start_line, end=end, score=h.score * SEED_BODY_DECAY, **common))  # type: ignore[arg-type]
    return out


def neighbor_candidates(i: int, h: common_pb2.Hit) -> list[Candidate]:
    loc = h.location
    end = max(loc.end_line, loc.start_line)
    score = h.score * DECAYS["neighbor"]
    origin = (loc.start_line, end)
    common = {"repository": loc.repository, "path": loc.path, "reason": "neighbor", "stage": "neighbors"}
    out = []
    if loc.start_line > 1:
        out.append(
            Candidate(start=max(1, loc.start_line - NEIGHBOR_LINES_BEFORE), end=loc.start_line - 1, score=score,
                      expanded_from=origin, keep_tail=True, seed_index=i, **common)  # type: ignore[arg-type]
        )  # fmt: skip
    out.append(
        Candidate(start=end + 1, end=end + NEIGHBOR_LINES_AFTER, score=score * RANK_DECAY,
                  expanded_from=origin, seed_index=i, **common)  # type: ignore[arg-type]
    )  # fmt: skip
    return out


async def graph_candidates(
    legs: LegClients,
    seeds: list[tuple[int, common_pb2.Hit]],
    store: FileStore,
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


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
