"""The rerank stage: when to rerank, and scoring the top of the fused list with the cross-encoder, blended with
the fused order.

Rows below the rerank depth keep their fused order beneath the reranked ones.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.v1 import common_pb2, keyword_pb2, rerank_pb2, search_pb2

# Candidates the cross-encoder reads when asked. With the gated reranker `codesearch reranker train` makes (blend
# ce+lex, 40-line chunks, auto; MRR@10): concept 0.967 -> 0.980 (dev check half), paraphrases 0.233 / 0.274 ->
# 0.261 / 0.276 (tune / check) at 20. An earlier model at 10 / 20 / 50: paraphrases 0.254 / 0.238 / 0.230
# (tune), 0.236 / 0.238 / 0.236 (check): deeper reads more candidates the fused list already ranked low.
# Cost on 2 cores, onnx backend, 128 tokens: ~0.65 s for 20 candidates (codesearch_lab/bench/rerank.py).
RERANK_DEPTH = 20
# The thorough preset reranks as deep: with the shipped model, depth 50 gave paraphrases 0.261 / 0.276 (tune /
# check), the same as 20, for ~1.8 s instead of ~0.7 s per meaning query.
RERANK_DEPTH_THOROUGH = 20
# Intents where the default preset reranks (the rerank policy of `auto`). None: on the stdlib it helps meaning
# queries (above) but costs ~40x the default preset's ~15 ms; on the polyglot set the reranker trained on the
# fit repositories' own code (the trainer's bi-encoder + lexical blend: the loaded machine left no time to train
# its cross-encoder) loses on them (NDCG@10 fit 0.872 -> 0.858: architecture 0.827 -> 0.819, semantic
# 0.858 -> 0.838, symbol 0.988 = 0.988; held-out 0.856 -> 0.845 alike; README "Reranking"), and architecture
# and semantic questions both route as understand_code, symbol ones as find_definition / exact_match, so no
# intent gains. It runs on request (`--rerank on`) and in the thorough preset.
RERANK_INTENTS: frozenset[int] = frozenset()
MIN_RERANK_BUDGET_S = 0.05  # the reranker is always given this long, even past the search's deadline

FUSED_WEIGHT = 0.3  # the fused score (normalised to the top hit) keeps the legs' agreement in the final order
RERANK_WEIGHT = 0.7  # the cross-encoder reads query and code together: it decides most of the order
CANDIDATE_CONTEXT_LINES = 40  # lines of a chunk sent to the reranker; the model reads ~128-256 tokens anyway


def skip_reason(policy: int, preset: int, intent: int, configured: bool, candidates: int) -> str:
    """Why the rerank stage does not run for this search ("" when it runs)."""
    if policy == search_pb2.RERANK_POLICY_OFF:
        return "off by request"
    if policy in (search_pb2.RERANK_POLICY_AUTO, search_pb2.RERANK_POLICY_UNSPECIFIED):
        if preset == search_pb2.PRESET_QUICK:
            return "the quick preset does not rerank"
        if preset != search_pb2.PRESET_THOROUGH and intent not in RERANK_INTENTS:
            return "off in the default preset for this intent (~0.65 s on CPU; see RERANK_INTENTS)"
    if not configured:
        return "rerank service is not configured"
    if candidates < 2:
        return "fewer than two hits"
    return ""


async def rerank_stage(
    legs: LegClients,
    request: search_pb2.SearchRequest,
    preset: int,
    intent: int,
    fused: list[FusedHit],
    deadline: float,
) -> tuple[list[FusedHit], common_pb2.LegReport]:
    """The fused list after the rerank stage (unchanged when it does not run), and the stage's report."""
    why = skip_reason(request.rerank, preset, intent, legs.rerank is not None, len(fused))
    if why:
        return fused, common_pb2.LegReport(
            leg=common_pb2.LEG_RERANK, status=common_pb2.LEG_STATUS_SKIPPED, reason=why
        )
    depth = RERANK_DEPTH_THOROUGH if preset == search_pb2.PRESET_THOROUGH else RERANK_DEPTH
    t = time.perf_counter()
    try:
        out, report = await rerank(
            legs, request.query, fused, depth, max(MIN_RERANK_BUDGET_S, deadline - time.perf_counter())
        )
    except grpc.aio.AioRpcError as e:
        status = (
            common_pb2.LEG_STATUS_SKIPPED
            if e.code() == grpc.StatusCode.FAILED_PRECONDITION
            else common_pb2.LEG_STATUS_DEGRADED
        )
        return fused, common_pb2.LegReport(
            leg=common_pb2.LEG_RERANK,
            status=status,
            reason=f"{e.code().name}: {e.details()}",
            latency_ms=(time.perf_counter() - t) * 1000,
        )
    report.latency_ms = (time.perf_counter() - t) * 1000
    return out, report


async def candidate_texts(legs: LegClients, hits: list[FusedHit]) -> list[str]:
    """The code of each hit, read from the keyword leg's copy (a hit's snippet may be a single line)."""
    keyword = legs.keyword
    assert keyword is not None

    async def read(f: FusedHit) -> str:
        loc = f.hit.location
        # Snippets are a chunk's first lines or one matching line: read the code the model should judge.
        if len(f.hit.snippet.splitlines()) >= min(loc.end_line - loc.start_line + 1, CANDIDATE_CONTEXT_LINES):
            return f.hit.snippet
        try:
            resp = await keyword.ReadFile(
                keyword_pb2.ReadFileRequest(
                    repository=loc.repository,
                    path=loc.path,
                    start_line=loc.start_line,
                    end_line=loc.start_line + CANDIDATE_CONTEXT_LINES - 1,
                ),
                timeout=1.0,
            )
            return resp.text
        except grpc.aio.AioRpcError:  # a file gone since indexing is still scored on what the hit has
            return f.hit.snippet

    return list(await asyncio.gather(*(read(f) for f in hits)))


async def rerank(
    legs: LegClients, query: str, fused: list[FusedHit], depth: int, timeout_s: float
) -> tuple[list[FusedHit], common_pb2.LegReport]:
    """Reranks fused[:depth]; returns the new order and the leg report. Raises grpc errors to the caller."""
    assert legs.rerank is not None
    head = fused[:depth]
    texts = await candidate_texts(legs, head)
    request = rerank_pb2.RerankRequest(
        query=query,
        candidates=[
            rerank_pb2.RerankCandidate(
                id=str(i),
                text=text,
                path=f.hit.location.path,
                breadcrumb=list(f.hit.breadcrumb),
                focus_lines=[
                    ln - f.hit.location.start_line + 1
                    for ln in f.hit.match_lines
                    if ln >= f.hit.location.start_line
                ],
            )
            for i, (f, text) in enumerate(zip(head, texts, strict=True))
        ],
    )
    resp = await legs.rerank.Rerank(request, timeout=timeout_s)
    top = head[0].score if head and head[0].score > 0 else 1.0
    by_index = {s.index: s.score for s in resp.scores}
    for i, f in enumerate(head):
        p = by_index.get(i, 0.0)
        f.leg_scores.append(common_pb2.LegScore(leg=common_pb2.LEG_RERANK, rank=0, score=p))
        f.found_by.append(common_pb2.LEG_RERANK)
        f.score = FUSED_WEIGHT * (f.score / top) + RERANK_WEIGHT * p
    head.sort(key=lambda f: (-f.score, f.key))
    for rank, f in enumerate(head):
        f.leg_scores[-1].rank = rank
    # Rows below the depth keep their order, scaled under the reranked block.
    floor = min((f.score for f in head), default=0.0)
    tail = fused[depth:]
    tail_top = tail[0].score if tail and tail[0].score > 0 else 1.0
    for f in tail:
        f.score = floor * 0.99 * (f.score / tail_top)
    report = common_pb2.LegReport(leg=common_pb2.LEG_RERANK, status=common_pb2.LEG_STATUS_OK, hits=len(head))
    return head + tail, report
