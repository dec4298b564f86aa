"""The vector leg's requests checked and its answers built: everything VectorService says on the wire, apart
from how it finds the answer (service.py) and where the vectors live (store.py)."""

from __future__ import annotations

import numpy as np

from codesearch.common.errors import check_query, invalid
from codesearch.config import MAX_QUERY_CHARS
from codesearch.v1 import common_pb2, vector_pb2
from codesearch.vector import tiers as vtiers
from codesearch.vector.store import Found, RepoIndex

MAX_SEARCH_LIMIT = 1000  # the API's documented bound; the orchestrator asks for far fewer
MAX_EMBED_TEXTS = 256  # per Embed call, as documented in vector.proto
MAX_EMBED_TEXT_CHARS = 100_000  # the model reads ~1,000 characters; more is a mistake, not a document


def check_search(request: vector_pb2.VectorSearchRequest) -> None:
    if request.limit <= 0 or request.limit > MAX_SEARCH_LIMIT:
        raise invalid(f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {request.limit}")
    if request.text and request.vector:
        raise invalid("give either text or vector, not both")
    if not request.vector:
        check_query(request.text, MAX_QUERY_CHARS, "text")


def given_vector(values: list[float], dims: int, tier: str, model_id: str) -> np.ndarray:
    """A query vector sent by the client, checked against the answering tier's model and made unit length."""
    if len(values) != dims:
        raise invalid(f"vector has {len(values)} dimensions; the {tier} tier's model {model_id} has {dims}")
    q = np.asarray(values, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if not np.isfinite(norm) or norm == 0.0:
        raise invalid("vector must be finite and non-zero")
    return q / norm


def hit(repository: str, rank: int, found: Found) -> common_pb2.Hit:
    m = found.meta
    return common_pb2.Hit(
        location=common_pb2.Location(
            repository=repository, path=m.path, start_line=m.start_line, end_line=m.end_line
        ),
        snippet=m.snippet,
        score=found.score,
        leg_scores=[common_pb2.LegScore(leg=common_pb2.LEG_VECTOR, rank=rank, score=found.score)],
        found_by=[common_pb2.LEG_VECTOR],
        language=m.language,
        breadcrumb=list(m.breadcrumb),
        symbol=m.symbol,
    )


def check_embed_texts(texts: list[str]) -> None:
    if not texts:
        raise invalid("texts is empty")
    if len(texts) > MAX_EMBED_TEXTS:
        raise invalid(f"at most {MAX_EMBED_TEXTS} texts per call, got {len(texts)}")
    for i, t in enumerate(texts):
        if not t.strip():
            raise invalid(f"text {i} is empty")
        if len(t) > MAX_EMBED_TEXT_CHARS:
            raise invalid(f"text {i} is {len(t)} characters; the limit is {MAX_EMBED_TEXT_CHARS}")


def add_repository_stats(
    resp: vector_pb2.GetVectorStatsResponse,
    r: RepoIndex,
    tiers: tuple[str, ...],
    usable: list[str],
    disk: int,
    static_query: str = "",
) -> None:
    """One repository's rows in GetVectorStats: its progress per tier, which tier answers it, and (where the
    static tier answers) what its queries get (vector/query_boost.py QueryBooster.state)."""
    progress, memory = r.progress(), r.memory_bytes()
    answers = vtiers.answering_tier([progress], usable) if usable else ""
    for t in tiers:
        resp.repository_tiers.append(
            vector_pb2.RepositoryTier(
                repository=r.repository,
                tier=t,
                embedded=progress[t][0],
                total=progress[t][1],
                memory_bytes=memory[t],
                answering=t == answers,
            )
        )
    tiers_text = ", ".join(f"{t} {progress[t][0]}/{progress[t][1]}" for t in tiers)
    resp.repositories.append(
        common_pb2.LegIndexStats(
            repository=r.repository,
            files=r.files,
            items=len(r.rows),
            disk_bytes=disk,
            index_version=r.index_version,
            detail=f"answers from {answers or 'no tier yet'} ({tiers_text})"
            + (f", static queries {static_query}" if static_query and answers == vtiers.STATIC else ""),
            pending=r.pending,
        )
    )
