"""BuildContext: the code that answers a question, with what surrounds it and what it depends on, in a budget.

Seeds are the hits of a routed Search. Three expansion stages add candidates, each with its own share of the
budget and a score decay relative to the seed it came from, so expansions never drown the seeds:
  neighbours  - lines just before and after a seed (decorators, comments, the rest of the block),
  breadcrumbs - the enclosing class or module header and the signatures of sibling definitions,
  graph       - definitions the seed calls or imports, and the definitions that call it.
Every candidate is a line range (context_candidates.py); the packer (packing.py) merges, trims and keeps the
budget exactly. Seeds enter as a head (signature and docstring) at the seed's score and a body at a decayed
score, so a small budget holds the heads of many seeds before the full body of one.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from codesearch.common.errors import check_query, failed_precondition, invalid
from codesearch.config import MAX_QUERY_CHARS
from codesearch.orchestrator.context_candidates import graph_candidates, neighbor_candidates, seed_candidates
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.packing import DEFAULT_MAX_SEGMENTS, FileText, Packer, render
from codesearch.orchestrator.search import SearchPipeline
from codesearch.v1 import common_pb2, keyword_pb2, search_pb2

MIN_BUDGET = 500  # below this not even one definition fits; per the proto
MAX_BUDGET = 200_000  # per the proto: about 50k tokens, more than an agent should spend on one question
MAX_SEGMENTS_LIMIT = 64  # options.max_segments_per_file above this is a mistake, not a preference

SEED_LIMIT = 30  # Search hits asked for: a 16k budget holds the heads of about this many definitions
EXPAND_SEEDS = 6  # expand only the best seeds; the expansions of lower ones would decay below any seed

# Shares of the budget each expansion stage may use at most; seeds may use all of it.
STAGE_SHARES = {"neighbors": 0.15, "breadcrumbs": 0.10, "graph": 0.20}
# When the seeds leave budget unused (few hits), expansions may fill it past their shares, best first.
SPILL_UNUSED = True
STAGE_ORDER = {"seed": 0, "neighbors": 1, "breadcrumbs": 2, "graph": 3}  # ties: seeds first

READ_TIMEOUT_S = 5.0  # reading an indexed file is local and takes milliseconds


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

    candidates = seed_candidates(hits, store.get, query)
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
        extra, degraded = await graph_candidates(legs, top, not opts.no_breadcrumbs, not opts.no_graph)
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


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
