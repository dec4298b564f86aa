"""Runs the polyglot set through a real server: index every repository, wait until it is complete, ask each query.

Each repository is indexed with IndexRepository (name = the set's repository name); "complete" means the stream
said DONE and, when a mode needs the vector leg, GetStatus reports no chunk awaiting embeddings. Every query is one
Search(query, repositories=[repo], mode, rerank policy, limit, no_cache=True); a plain mode leaves the rerank
policy to the server's default (AUTO), "+rerank" / "-rerank" force it on / off. Run lines are written in score.py's format
({query_id, repo, results[{path, start_line, end_line, score}]}) plus the response's confidence, strategy and
intent, so `score.py score RUN.jsonl` reads them as they are.

The leg dump (`dump_legs`) records, for each query, every leg's own list (keyword, vector, definitions of each
name in the query, callers) with the hits' full fields, so fusion and boost variants can be re-scored offline
(codesearch_lab/offline.py) without asking the server again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from codesearch.common.errors import MODEL_LOADING
from codesearch.eval.harness import MODES, RERANK, SEARCH_TIMEOUT_S, Variant, vector_tier
from codesearch.eval.polyglot import PolyglotSet, PolyQuery
from codesearch.orchestrator.plan import (
    Scope,
    keyword_stem_coverage,
    routed_vector_request,
)
from codesearch.orchestrator.query_terms import query_names
from codesearch.orchestrator.router import classify
from codesearch.v1 import (
    common_pb2,
    graph_pb2,
    graph_pb2_grpc,
    keyword_pb2,
    keyword_pb2_grpc,
    search_pb2,
    search_pb2_grpc,
    vector_pb2_grpc,
)

INDEX_TIMEOUT_S = 1800.0  # one repository of the set; the largest (abseil-cpp) takes well under a minute
EMBED_WAIT_S = 7200.0  # the vector leg at ~23 chunks/s needs about an hour for the whole set
# A server's first start distils the static model (~100 s on 2 busy cores) and loads MiniLM before its vector
# leg answers; longer than this is a model that will not load.
MODEL_LOAD_WAIT_S = 600.0
MODEL_LOAD_POLL_S = 1.0
VECTOR_SILENT_S = 120.0  # a busy embedder can miss GetStatus's 2 s timeout for a while; this long is down
POLL_S = 2.0  # how often GetStatus is asked while embeddings fill in
LEG_DUMP_DEPTH = 50  # as the orchestrator's LEG_DEPTH: what fusion sees
VECTOR_MODES = frozenset({"semantic", "naive_hybrid", "auto"})


class IndexFailed(Exception):
    pass


def index_repositories(
    stub: search_pb2_grpc.SearchServiceStub, pset: PolyglotSet, log: Callable[[str], None]
) -> dict[str, float]:
    """Indexes every repository of the set; seconds per repository. Raises IndexFailed on a failed stream."""
    took: dict[str, float] = {}
    for name, spec in pset.repos.items():
        t0 = time.perf_counter()
        last = search_pb2.IndexRepositoryResponse()
        try:
            for message in stub.IndexRepository(
                search_pb2.IndexRepositoryRequest(path=str(spec.root.resolve()), name=name),
                timeout=INDEX_TIMEOUT_S,
            ):
                last = message
        except grpc.RpcError as e:
            raise IndexFailed(f"indexing {name} ({spec.root}): {e.code().name}: {e.details()}") from e
        if last.phase != search_pb2.INDEX_PHASE_DONE:
            raise IndexFailed(f"indexing {name} ended in phase {search_pb2.IndexPhase.Name(last.phase)}")
        took[name] = time.perf_counter() - t0
        degraded = f", degraded legs: {', '.join(last.degraded_legs)}" if last.degraded_legs else ""
        log(
            f"  indexed {name}: {last.files_total} files, {last.chunks} chunks in {took[name]:.1f}s{degraded}"
        )
    return took


def vector_available(
    stub: search_pb2_grpc.SearchServiceStub, loading_wait_s: float = MODEL_LOAD_WAIT_S
) -> bool:
    """The server's vector leg answers. While its model is still loading (a server just started) this waits for
    it, at most `loading_wait_s`: read too early, a run would skip the embedding wait and dump no vector list."""
    t0 = time.perf_counter()
    while True:
        status = stub.GetStatus(search_pb2.GetStatusRequest(), timeout=SEARCH_TIMEOUT_S)
        vector = next((s for s in status.services if s.name == "vector"), None)
        if vector is None or vector.available:
            return vector is not None
        if MODEL_LOADING not in vector.detail or time.perf_counter() - t0 > loading_wait_s:
            return False
        time.sleep(MODEL_LOAD_POLL_S)


def wait_for_embeddings(
    stub: search_pb2_grpc.SearchServiceStub, names: Iterable[str], log: Callable[[str], None]
) -> float:
    """Blocks until no repository of `names` has chunks awaiting embeddings; the seconds waited."""
    wanted = set(names)
    t0 = time.perf_counter()
    last_report = 0.0
    unknown_since: float | None = None
    while True:
        status = stub.GetStatus(search_pb2.GetStatusRequest(), timeout=SEARCH_TIMEOUT_S)
        waited = time.perf_counter() - t0
        if any(r.embeddings_unknown for r in status.repositories if r.name in wanted):
            # The vector leg did not answer this time, so its counts read 0: not "done", ask again.
            unknown_since = waited if unknown_since is None else unknown_since
            if waited - unknown_since > VECTOR_SILENT_S:
                raise IndexFailed(f"the vector leg has not answered GetStatus for {VECTOR_SILENT_S:.0f}s")
            time.sleep(POLL_S)
            continue
        unknown_since = None
        pending = {r.name: r.embeddings_pending for r in status.repositories if r.name in wanted}
        left = sum(pending.values())
        if not left:
            return waited
        if waited > EMBED_WAIT_S:
            raise IndexFailed(f"embeddings still pending after {waited:.0f}s: {left} chunks")
        if waited - last_report > 30:
            log(f"  waiting for embeddings: {left} chunks pending ({waited:.0f}s)")
            last_report = waited
        time.sleep(POLL_S)


def _search(
    stub: search_pb2_grpc.SearchServiceStub,
    q: PolyQuery,
    variant: Variant,
    limit: int,
    text: str | None = None,
) -> tuple[search_pb2.SearchResponse | None, float, str]:
    req = search_pb2.SearchRequest(
        query=text if text is not None else q.text,
        repositories=[q.repo],
        mode=MODES[variant.mode],
        rerank=RERANK[variant.rerank],
        limit=limit,
        no_cache=True,
    )
    t0 = time.perf_counter()
    try:
        resp = stub.Search(req, timeout=SEARCH_TIMEOUT_S)
    except grpc.RpcError as e:
        return None, (time.perf_counter() - t0) * 1000, e.code().name
    return resp, (time.perf_counter() - t0) * 1000, ""


def run_line(q: PolyQuery, resp: search_pb2.SearchResponse | None, ms: float, error: str) -> dict[str, Any]:
    line: dict[str, Any] = {"repo": q.repo, "query_id": q.qid, "latency_ms": round(ms, 3)}
    if resp is None:
        line["results"] = []
        line["error"] = error
        return line
    line["results"] = [
        {
            "path": h.location.path,
            "start_line": h.location.start_line,
            "end_line": h.location.end_line,
            "score": round(h.score, 6),
        }
        for h in resp.hits
    ]
    line["confidence"] = round(resp.confidence, 6)
    if tier := vector_tier(resp):
        line["vector_tier"] = tier
    line["strategy"] = resp.strategy
    line["intent"] = search_pb2.Intent.Name(resp.intent).removeprefix("INTENT_").lower()
    reranked = [
        r for r in resp.legs if r.leg == common_pb2.LEG_RERANK and r.status == common_pb2.LEG_STATUS_OK
    ]
    if reranked:
        line["rerank_ms"] = round(reranked[0].latency_ms, 3)
    degraded = [r for r in resp.legs if r.status == 2]  # LEG_STATUS_DEGRADED
    if degraded:
        line["degraded"] = [r.reason for r in degraded]
    return line


def _each(
    one: Callable[[PolyQuery], dict[str, Any]],
    queries: Sequence[PolyQuery],
    concurrency: int,
    progress: Callable[[int], None] | None,
) -> list[dict[str, Any]]:
    """one(q) for every query, `concurrency` in flight, in query order."""
    out = []
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for i, rec in enumerate(pool.map(one, queries), 1):
            out.append(rec)
            if progress:
                progress(i)
    return out


def run_mode(
    stub: search_pb2_grpc.SearchServiceStub,
    queries: Sequence[PolyQuery],
    variant: Variant,
    limit: int,
    concurrency: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    def one(q: PolyQuery) -> dict[str, Any]:
        return run_line(q, *_search(stub, q, variant, limit))

    return _each(one, queries, concurrency, progress)


def _dicts(hits: Iterable[Any]) -> list[dict[str, Any]]:
    return [MessageToDict(h, preserving_proto_field_name=True) for h in hits]


def dump_legs(
    channel: grpc.Channel,
    queries: Sequence[PolyQuery],
    with_vector: bool,
    concurrency: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Per query: {"query_id", "repo", "query", "legs": {"keyword": [hit...] (with word stems where routed `auto`
    asks for them), "vector": [hit...],
    "definition": {name: [symbol...]}, "callers": {name: [reference...]}}}, each leg's own RPC answer (asked on
    the same server, which hosts every service), before any fusion, boost or per-file cut."""
    keyword = keyword_pb2_grpc.KeywordServiceStub(channel)
    vector = vector_pb2_grpc.VectorServiceStub(channel)
    graph = graph_pb2_grpc.GraphServiceStub(channel)
    t = SEARCH_TIMEOUT_S

    def one(q: PolyQuery) -> dict[str, Any]:
        repos = [q.repo]
        # Word stems where routed `auto` asks for them (plan.keyword_stem_coverage), so the replay matches.
        stem_below = keyword_stem_coverage(classify(q.text), q.text)
        kw = keyword.KeywordSearch(
            keyword_pb2.KeywordSearchRequest(
                repositories=repos, query=q.text, limit=LEG_DUMP_DEPTH, stem_below_coverage=stem_below
            ),
            timeout=t,
        )
        legs: dict[str, Any] = {
            "keyword": _dicts(kw.hits),
            "definition": {},
            "callers": {},
        }
        if with_vector:
            # The vector list routed `auto` fuses (offline replays of the ranking read it), asked by the
            # orchestrator's own request (a boosted static query, LEG_DEPTH hits, late interaction where it leads).
            scope = Scope.of(search_pb2.SearchRequest(), repos)
            vec = vector.VectorSearch(routed_vector_request(classify(q.text), q.text, scope), timeout=t)
            legs["vector"] = _dicts(vec.hits)
        for name in asked_names(q.text):
            defs = graph.FindDefinitions(
                graph_pb2.FindDefinitionsRequest(repositories=repos, name=name, limit=LEG_DUMP_DEPTH),
                timeout=t,
            )
            refs = graph.FindReferences(
                graph_pb2.FindReferencesRequest(repositories=repos, name=name, limit=LEG_DUMP_DEPTH),
                timeout=t,
            )
            legs["definition"][name] = _dicts(defs.symbols)
            legs["callers"][name] = _dicts(refs.references)
        legs["centrality"] = _centrality(graph, legs, t)
        return {"query_id": q.qid, "repo": q.repo, "query": q.text, "legs": legs}

    return _each(one, queries, concurrency, progress)


def asked_names(query: str) -> list[str]:
    """The names whose definitions and references a dump records: the query's names (the ranking signals read
    them) and the router's target, which the server's structural legs are asked for (plan.py: the target, or the
    whole query); without it a phrased "where is mksalt defined" replayed without its definition."""
    names = list(query_names(query))
    target = classify(query).target or query.strip()
    return names if target in names else [*names, target]


def _centrality(graph: graph_pb2_grpc.GraphServiceStub, legs: dict[str, Any], timeout: float) -> list[Any]:
    """[path, start_line, end_line, centrality] of every place the legs found: the server boosts the fused head
    by it for structural questions (ranking/boosts.py), so the replay needs it (asked for every query, so that
    variants may try it for others)."""
    hits = legs["keyword"] + legs.get("vector", [])
    hits += [h for found in (*legs["definition"].values(), *legs["callers"].values()) for h in found]
    places = sorted(
        {
            (h["location"]["path"], h["location"].get("start_line", 0), h["location"].get("end_line", 0))
            for h in hits
        }
    )
    repo = next((h["location"]["repository"] for h in hits), "")
    locations = [common_pb2.Location(repository=repo, path=p, start_line=a, end_line=b) for p, a, b in places]
    resp = graph.Centrality(graph_pb2.CentralityRequest(locations=locations), timeout=timeout)
    return [[*place, value] for place, value in zip(places, resp.values, strict=True)]


def write_jsonl(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def stderr_log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
