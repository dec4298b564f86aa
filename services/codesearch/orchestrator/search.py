"""One Search, top to bottom: read the query, route, plan, fan out under deadlines, rank, rerank, cut, explain.

    read      query.Query.parse               the query's words, names and kind, once for every stage
    route     router.classify                 what the query is about, and each modality's weight
    plan      plan.plan_search                for each leg: the request, its weight, its budget; how to fuse;
                                              whether the keyword leg may settle it; what to ask if nothing is found
    fan out   fanout.fan_out                  every planned leg at once, each under its budget
    rank      ranking/fusion, ranking/recipe  fuse, centrality, the one ranking recipe (its constants as data)
    rerank    rerank_stage.rerank_stage       the cross-encoder over the head, when it pays
    cut       ranking.topk.cut                Smart TopK
    explain   ranking.confidence              how sure the answer is

Answers are cached by request and index versions (cache.py).
"""

from __future__ import annotations

import time

import grpc

from codesearch.common.errors import ServiceError, check_limit, check_query, not_found
from codesearch.common.labels import label
from codesearch.common.metrics import cache_lookups, leg_degraded, leg_duration, search_duration
from codesearch.common.telemetry import tracer
from codesearch.config import MAX_LIMIT, MAX_QUERY_CHARS
from codesearch.orchestrator import fanout
from codesearch.orchestrator.cache import QueryCache, cacheable, request_key
from codesearch.orchestrator.fanout import FanOut, leg_budget, leg_name
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.plan import Plan, Scope, plan_search
from codesearch.orchestrator.query import Query
from codesearch.orchestrator.ranking import adaptive, boosts, recipe, topk
from codesearch.orchestrator.ranking.confidence import confidence, is_sentence
from codesearch.orchestrator.ranking.fusion import FusedHit, fuse_for, rrf_k
from codesearch.orchestrator.ranking.signals import SHIPPED, Params
from codesearch.orchestrator.registry import Registry
from codesearch.orchestrator.rerank_stage import rerank_stage
from codesearch.orchestrator.router import classify
from codesearch.orchestrator.sharding import ShardedStub
from codesearch.v1 import common_pb2, keyword_pb2, search_pb2

DEFAULT_DEADLINE_S = 10.0  # when the client sets none
SHARD_REPOS_TTL_S = 2.0  # how stale the list of repositories held by shards may be


def strategy_name(strategy: int) -> str:
    """ "rrf", "direct", ...: the strategy as metrics and the CLI print it."""
    return label(search_pb2.Strategy, strategy, "STRATEGY_")


class SearchPipeline:
    def __init__(self, legs: LegClients, registry: Registry) -> None:
        self.legs = legs
        self.registry = registry
        self.cache = QueryCache()
        self._shard_repos: tuple[float, dict[str, int]] = (-1e9, {})

    async def search(
        self, request: search_pb2.SearchRequest, time_remaining: float | None
    ) -> search_pb2.SearchResponse:
        with tracer.start_as_current_span("search") as span:
            started = time.perf_counter()
            check_query(request.query, MAX_QUERY_CHARS)
            if request.limit:
                check_limit(request.limit, 0, MAX_LIMIT)
            versions = await self._repositories(list(request.repositories))
            key = request_key(request, versions)
            cached = None if request.no_cache else self.cache.get(key)
            if not request.no_cache:
                cache_lookups.add(1, {"result": "hit" if cached is not None else "miss"})
            if cached is not None:
                cached.cache_hit = True
                cached.total_latency_ms = (time.perf_counter() - started) * 1000
                span.set_attribute("cache_hit", True)
                return cached
            deadline = time.perf_counter() + (
                time_remaining if time_remaining is not None else DEFAULT_DEADLINE_S
            )
            resp = await self._search(request, sorted(versions), deadline, started)
            span.set_attribute("intent", search_pb2.Intent.Name(resp.intent))
            span.set_attribute("hits", len(resp.hits))
            _record_metrics(resp)
            if cacheable(resp):
                self.cache.put(key, resp)
            return resp

    async def _search(
        self, request: search_pb2.SearchRequest, repos: list[str], deadline: float, started: float
    ) -> search_pb2.SearchResponse:
        preset = request.preset or search_pb2.PRESET_DEFAULT
        scope = Scope.of(request, repos)
        available = {name for name, leg in self.legs.legs.items() if leg.stub is not None}
        stage_ms: dict[str, float] = {}

        t = time.perf_counter()
        with tracer.start_as_current_span("route") as span:
            query = Query.parse(request.query)
            plan = plan_search(request, query, classify(query), scope, available, leg_budget(deadline))
            span.set_attribute("intent", search_pb2.Intent.Name(plan.route.intent))
            span.set_attribute("strategy", strategy_name(plan.strategy))
        stage_ms["route"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        # Meaning queries quoted word for word from the code are settled by the keyword leg alone (adaptive.py).
        intent = plan.route.intent

        def settle(hits: list[common_pb2.Hit]) -> str:
            return adaptive.decisive(intent, adaptive.keyword_coverage(query, hits))

        answer = await fanout.fan_out(self.legs, plan.legs, repos, settle if plan.settles else None, deadline)
        if plan.fallback is not None and not any(hits for _l, _w, hits in answer.lists):
            plan = plan.fallback  # the plan's next step: the one leg it trusted found nothing
            answer = await fanout.fan_out(self.legs, plan.legs, repos, None, deadline)
        refuse_outage(answer.reports)  # issue 20: an outage must not read as "nothing found"
        stage_ms["fan_out"] = (time.perf_counter() - t) * 1000
        coverage = adaptive.keyword_coverage(query, answer.hits_of(common_pb2.LEG_KEYWORD))
        params = recipe.recipe_for(plan.route.intent, plan.routed, coverage)

        t = time.perf_counter()
        with tracer.start_as_current_span("fuse"):
            fused = await self._rank(plan, answer, query, preset, params)
        stage_ms["fuse"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        with tracer.start_as_current_span("rerank") as span:
            fused, rerank_report = await rerank_stage(
                self.legs, request, preset, plan.route.intent, fused, deadline
            )
            span.set_attribute("status", common_pb2.LegStatus.Name(rerank_report.status))
        answer.reports.append(rerank_report)
        stage_ms["rerank"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        with tracer.start_as_current_span("topk"):
            cut, reason = topk.cut([f.score for f in fused], request.limit)
        stage_ms["topk"] = (time.perf_counter() - t) * 1000

        resp = _response(plan, answer, fused[:cut], reason)
        resp.confidence = confidence(
            fused,
            plan.route.confidence,
            coverage,
            ranked_by_signals=params is SHIPPED,
            direct=plan.strategy == search_pb2.STRATEGY_DIRECT,
            legs_answered=frozenset(_answered(answer.reports)),
            query=query,
            sentence=is_sentence(plan.route.intent),
        )
        for name, ms in stage_ms.items():
            resp.stage_ms[name] = ms
        resp.total_latency_ms = (time.perf_counter() - started) * 1000
        return resp

    async def _rank(
        self, plan: Plan, answer: FanOut, query: Query, preset: int, params: Params
    ) -> list[FusedHit]:
        """Fusion (of the legs' scores under STRATEGY_SCORE_FUSION, else of their ranks), the centrality boost
        for routed structural questions, then the ranking recipe with `params` (ranking/recipe.py)."""
        k = rrf_k(preset, naive=plan.strategy == search_pb2.STRATEGY_NAIVE_RRF)
        fused = fuse_for(plan.strategy, answer.lists, k)
        if boosts.wants_centrality(plan.route.intent, plan.routed):
            head = fused[: boosts.CENTRALITY_DEPTH]
            values = await fanout.centrality(self.legs, [f.hit.location for f in head])
            boosts.apply_centrality(fused, values + [0.0] * (len(fused) - len(head)))
        definitions = [h.location for h in answer.hits_of(common_pb2.LEG_DEFINITION)]
        return recipe.rank(fused, query, definitions, params)

    async def _repositories(self, requested: list[str]) -> dict[str, int]:
        """The repositories to search with their index versions; NOT_FOUND for one that is not indexed."""
        known = {name: rec.index_version for name, rec in self.registry.load().items()}
        if isinstance(keyword := self.legs.keyword, ShardedStub):
            known.update(await self._shard_repositories(keyword))
        for r in requested:
            if r not in known:
                raise not_found(f"repository {r!r} is not indexed")
        return {r: known[r] for r in (requested or sorted(known))}

    async def _shard_repositories(self, keyword: ShardedStub) -> dict[str, int]:
        """Repositories the shards hold (an orchestrator that did not index them still finds them)."""
        now = time.monotonic()
        if now - self._shard_repos[0] < SHARD_REPOS_TTL_S:
            return self._shard_repos[1]
        try:
            stats = await keyword.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(), timeout=2.0)
            repos = {s.repository: int(s.index_version) for s in stats.bm25}
        except grpc.aio.AioRpcError:
            repos = self._shard_repos[1]  # every shard down: keep what was known, the legs will say degraded
        self._shard_repos = (now, repos)
        return repos


def _answered(reports: list[common_pb2.LegReport]) -> set[int]:
    """The retrieval legs that answered (fully or over part of their data)."""
    return {
        r.leg
        for r in reports
        if r.status in (common_pb2.LEG_STATUS_OK, common_pb2.LEG_STATUS_PARTIAL)
        and r.leg != common_pb2.LEG_RERANK
    }


def _response(plan: Plan, answer: FanOut, kept: list[FusedHit], reason: str) -> search_pb2.SearchResponse:
    resp = search_pb2.SearchResponse(
        intent=plan.route.intent,
        intent_confidence=plan.route.confidence,
        strategy=plan.strategy,
        weights=[search_pb2.ModalityWeight(modality=m, weight=w) for m, w in plan.route.weights.items()],
        legs=answer.reports,
        topk_reason=reason,
    )
    for f in kept:
        hit = common_pb2.Hit()
        hit.CopyFrom(f.hit)
        hit.score = f.score
        del hit.leg_scores[:]
        hit.leg_scores.extend(f.leg_scores)
        del hit.found_by[:]
        hit.found_by.extend(f.found_by)
        hit.boosts.extend(f.boosts)
        resp.hits.append(hit)
    return resp


def _record_metrics(resp: search_pb2.SearchResponse) -> None:
    intent = search_pb2.Intent.Name(resp.intent)
    search_duration.record(
        resp.total_latency_ms, {"intent": intent, "strategy": strategy_name(resp.strategy)}
    )
    for leg in resp.legs:
        if leg.status != common_pb2.LEG_STATUS_SKIPPED:
            attrs = {"leg": leg_name(leg.leg), "status": common_pb2.LegStatus.Name(leg.status)}
            leg_duration.record(leg.latency_ms, attrs)
        if leg.status == common_pb2.LEG_STATUS_DEGRADED:
            leg_degraded.add(1, {"leg": leg_name(leg.leg)})


# --- outages (issue 20) ---------------------------------------------------------------------------------------
# Characters of each leg's reason in the outage's status details: five legs and the message stay far under
# gRPC's 8 KiB metadata limit (the message itself is cut at 1,000 characters by common/grpc_util.py).
OUTAGE_REASON_CHARS = 500


def refuse_outage(reports: list[common_pb2.LegReport]) -> None:
    """Fails the search when every leg asked failed: RESOURCE_EXHAUSTED when each refused for load,
    DEADLINE_EXCEEDED when each ran out of time, else UNAVAILABLE; the message lists every leg's report."""
    asked = [r for r in reports if r.status != common_pb2.LEG_STATUS_SKIPPED]
    # A sharded leg with some shards down still answered for the others (fanout.py says "shard ... failed").
    failed = [
        r for r in asked if r.status == common_pb2.LEG_STATUS_DEGRADED and not r.reason.startswith("shard ")
    ]
    if not asked or len(failed) < len(asked):
        return
    if all(r.reason.startswith(grpc.StatusCode.RESOURCE_EXHAUSTED.name) for r in asked):
        code = grpc.StatusCode.RESOURCE_EXHAUSTED
    elif all(r.reason.startswith("timed out") for r in asked):
        code = grpc.StatusCode.DEADLINE_EXCEEDED
    else:
        code = grpc.StatusCode.UNAVAILABLE
    legs = "; ".join(f"{leg_name(r.leg)}: {r.reason}" for r in asked)
    # The reports also go as rich status details (google.rpc.Status), so a client reads them as LegReports;
    # reasons are cut so that all of them stay under gRPC's 8 KiB metadata limit.
    details = [
        common_pb2.LegReport(
            leg=r.leg, status=r.status, reason=r.reason[:OUTAGE_REASON_CHARS], latency_ms=r.latency_ms
        )
        for r in asked
    ]
    raise ServiceError(code, f"every leg asked failed ({legs})", details)
