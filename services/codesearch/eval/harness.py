"""Runs a query set through SearchService.Search of a running server, one variant (mode x rerank) at a time.

Each query is one Search(query, repositories=[repo], mode, rerank, limit, no_cache=True) call; latency is the
client-side wall time of the call. Literal and regex modes get a pattern derived from the query (patterns.py).
A call answered INVALID_ARGUMENT (a forced mode that cannot take the query) is recorded as zero results with
error "INVALID_ARGUMENT"; any other failure is recorded with its status name and counted as an error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc

from codesearch.config import MAX_MESSAGE_BYTES
from codesearch.eval.patterns import literal_pattern, regex_pattern
from codesearch.eval.runfile import Query, Result, RunRecord
from codesearch.orchestrator.fanout import BOOSTED_QUERY
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

MODES: dict[str, search_pb2.SearchMode] = {
    "auto": search_pb2.SEARCH_MODE_AUTO,
    "keyword": search_pb2.SEARCH_MODE_KEYWORD,
    "literal": search_pb2.SEARCH_MODE_LITERAL,
    "regex": search_pb2.SEARCH_MODE_REGEX,
    "semantic": search_pb2.SEARCH_MODE_SEMANTIC,
    "definition": search_pb2.SEARCH_MODE_DEFINITION,
    "callers": search_pb2.SEARCH_MODE_CALLERS,
    "callees": search_pb2.SEARCH_MODE_CALLEES,
    "impact": search_pb2.SEARCH_MODE_IMPACT,
    "naive_hybrid": search_pb2.SEARCH_MODE_NAIVE_HYBRID,
}
RERANK: dict[str, search_pb2.RerankPolicy] = {
    "": search_pb2.RERANK_POLICY_UNSPECIFIED,
    "on": search_pb2.RERANK_POLICY_ON,
    "off": search_pb2.RERANK_POLICY_OFF,
}
SEARCH_TIMEOUT_S = 120.0  # generous: a cold model load on the first semantic query can take a while
WARMUP_QUERIES = 1  # untimed calls per variant first, so model loads and cold caches do not skew p95
VARIANT_RE = re.compile(r"^(?P<mode>[a-z_]+)(?P<rerank>[+-]rerank)?$")


@dataclass(frozen=True)
class Variant:
    """One column of the report: a mode and a rerank policy ("" = the server's default, AUTO)."""

    mode: str
    rerank: str = ""

    @property
    def name(self) -> str:
        return self.mode + {"": "", "on": "+rerank", "off": "-rerank"}[self.rerank]


def parse_variants(modes: str, rerank: str | None = None) -> list[Variant]:
    """'keyword,auto+rerank,auto-rerank' and optionally --rerank 'on,off' (crossed with every plain mode)."""
    policies = [p.strip() for p in (rerank or "").split(",") if p.strip()]
    for p in policies:
        if p not in ("on", "off", "auto"):
            raise ValueError(f"unknown rerank policy {p!r}; use on, off or auto")
    out: list[Variant] = []
    for item in (m.strip() for m in modes.split(",")):
        if not item:
            continue
        m = VARIANT_RE.match(item)
        if not m or m.group("mode") not in MODES:
            raise ValueError(
                f"unknown mode {item!r}; modes: {', '.join(MODES)} (optionally +rerank / -rerank)"
            )
        if m.group("rerank"):
            out.append(Variant(m.group("mode"), "on" if m.group("rerank")[0] == "+" else "off"))
        elif policies:
            # The server default policy is AUTO, so "auto" is the plain variant.
            out += [Variant(m.group("mode"), "" if p == "auto" else p) for p in policies]
        else:
            out.append(Variant(m.group("mode")))
    seen: dict[str, Variant] = {}
    for v in out:
        seen.setdefault(v.name, v)
    return list(seen.values())


def request_for(q: Query, variant: Variant, repo: str, limit: int) -> search_pb2.SearchRequest:
    text = q.query
    if variant.mode == "literal":
        text = literal_pattern(q.query)
    elif variant.mode == "regex":
        text = regex_pattern(q.query)
    return search_pb2.SearchRequest(
        query=text,
        repositories=[repo],
        mode=MODES[variant.mode],
        rerank=RERANK[variant.rerank],
        limit=limit,
        case_sensitive=variant.mode in ("literal", "regex"),
        no_cache=True,
    )


def open_channel(address: str) -> grpc.Channel:
    opts = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    return grpc.insecure_channel(address, options=opts)


def search_one(stub: search_pb2_grpc.SearchServiceStub, req: search_pb2.SearchRequest, qid: str) -> RunRecord:
    t0 = time.perf_counter()
    try:
        resp = stub.Search(req, timeout=SEARCH_TIMEOUT_S)
    except grpc.RpcError as e:
        ms = (time.perf_counter() - t0) * 1000.0
        code = e.code() if hasattr(e, "code") else None
        name = code.name if code is not None else "UNKNOWN"
        details = e.details() if hasattr(e, "details") else str(e)
        return RunRecord(id=qid, results=[], latency_ms=ms, error=name, error_message=(details or "")[:300])
    ms = (time.perf_counter() - t0) * 1000.0
    results = [
        Result(path=h.location.path, line=h.location.start_line, end_line=h.location.end_line, score=h.score)
        for h in resp.hits
    ]
    return RunRecord(
        id=qid, results=results, latency_ms=ms, confidence=resp.confidence, vector_tier=vector_tier(resp)
    )


def vector_tier(resp: search_pb2.SearchResponse) -> str:
    """The tier named by the vector leg's report ("tier static, model ..."), with " boosted" when the static
    tier's query was boosted by the transformer (vector/query_boost.py); "" when it did not answer."""
    for report in resp.legs:
        if report.leg == common_pb2.LEG_VECTOR and (m := _TIER_DETAIL.match(report.detail)):
            return m.group(1) + (" boosted" if BOOSTED_QUERY in report.detail else "")
    return ""


_TIER_DETAIL = re.compile(r"tier (\w+)")  # fanout.py's LegReport.detail of the vector leg


class RepositoryNotFound(Exception):
    pass


def check_repository(channel: grpc.Channel, repo: str) -> None:
    """Fails early when the server does not know the repository (skipped if ListRepositories is not served)."""
    stub = search_pb2_grpc.SearchServiceStub(channel)
    try:
        resp = stub.ListRepositories(search_pb2.ListRepositoriesRequest(), timeout=SEARCH_TIMEOUT_S)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNIMPLEMENTED:
            return
        raise
    names = [r.name for r in resp.repositories]
    if repo not in names:
        raise RepositoryNotFound(
            f"repository {repo!r} is not indexed on the server (has: {', '.join(names) or 'none'})"
        )


def run_variant(
    channel: grpc.Channel,
    variant: Variant,
    queries: Sequence[Query],
    repo: str,
    limit: int = 10,
    concurrency: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[RunRecord]:
    stub = search_pb2_grpc.SearchServiceStub(channel)
    for q in queries[:WARMUP_QUERIES]:
        search_one(stub, request_for(q, variant, repo, limit), q.id)
    records: list[RunRecord] = []
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        calls = pool.map(lambda q: search_one(stub, request_for(q, variant, repo, limit), q.id), queries)
        for i, rec in enumerate(calls, 1):
            records.append(rec)
            if progress:
                progress(i)
    return records
