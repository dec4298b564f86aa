"""The rerank stage: score the top of the fused list with the cross-encoder and blend with the fused order.

Rows below the rerank depth keep their fused order beneath the reranked ones.
"""

from __future__ import annotations

import asyncio

import grpc

from codesearch.orchestrator.fusion import FusedHit
from codesearch.orchestrator.legs import LegClients
from codesearch.v1 import common_pb2, keyword_pb2, rerank_pb2

FUSED_WEIGHT = 0.3  # the fused score (normalised to the top hit) keeps the legs' agreement in the final order
RERANK_WEIGHT = 0.7  # the cross-encoder reads query and code together: it decides most of the order
CANDIDATE_CONTEXT_LINES = 40  # lines of a chunk sent to the reranker; the model reads ~128-256 tokens anyway


async def candidate_texts(legs: LegClients, hits: list[FusedHit]) -> list[str]:
    """The code of each hit, read from the keyword leg's copy (a hit's snippet may be a single line)."""
    assert legs.keyword is not None

    async def read(f: FusedHit) -> str:
        loc = f.hit.location
        # Snippets are a chunk's first lines or one matching line: read the code the model should judge.
        if len(f.hit.snippet.splitlines()) >= min(loc.end_line - loc.start_line + 1, CANDIDATE_CONTEXT_LINES):
            return f.hit.snippet
        try:
            resp = await legs.keyword.ReadFile(  # type: ignore[union-attr]
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
