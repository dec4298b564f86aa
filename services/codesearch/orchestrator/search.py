"""One Search: route, fan out to legs in parallel under deadlines, fuse, boost, cut, and explain."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial

import grpc

from codesearch.common.errors import check_limit, check_query, invalid, not_found
from codesearch.common.metrics import cache_lookups, leg_degraded, leg_duration, search_duration
from codesearch.common.telemetry import tracer
from codesearch.config import MAX_LIMIT, MAX_QUERY_CHARS
from codesearch.orchestrator import adaptive, fusion, rerank_stage, router, topk
from codesearch.orchestrator.cache import QueryCache, request_key
from codesearch.orchestrator.expansion import expand
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.registry import Registry
from codesearch.orchestrator.router import DIRECT_CONFIDENCE, Route, classify, weights_for
from codesearch.orchestrator.sharding import SHARD_FAILURES, ShardedStub
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, search_pb2, vector_pb2

DEFAULT_DEADLINE_S = 10.0  # when the client sets none
LEG_DEADLINE_SHARE = 0.8  # legs get this share of the time left; fusion and the reply need the rest
SHARD_REPOS_TTL_S = 2.0  # how stale the list of repositories held by shards may be
MIN_LEG_BUDGET_S = 0.01  # below this no leg can answer; the call then degrades rather than never being sent
LEG_DEPTH = 50  # hits asked of each leg: enough for fusion to find agreement below the top 10
# Fused places whose centrality is looked up: a boost of at most 1.5x does not lift a place from below 40 into the
# top 10 (MRR@10 unchanged even at 20 and 30 on the tune half); looking up all ~150 places cost ~4 ms.
CENTRALITY_DEPTH = 40
RRF_K = {search_pb2.PRESET_QUICK: 40.0, search_pb2.PRESET_DEFAULT: 40.0, search_pb2.PRESET_THOROUGH: 60.0}
NAIVE_RRF_K = 60.0  # the textbook constant, for the naive baseline
DEFAULT_RESULTS = 20  # Smart TopK's hard maximum when the client leaves limit at 0
# Candidates the cross-encoder reads when asked. With the gated reranker `codesearch reranker train` makes (blend
# ce+lex, 40-line chunks, auto; MRR@10): concept 0.967 -> 0.980 (dev check half), paraphrases 0.233 / 0.274 ->
# 0.261 / 0.276 (tune / check) at 20. An earlier model at 10 / 20 / 50: paraphrases 0.254 / 0.238 / 0.230
# (tune), 0.236 / 0.238 / 0.236 (check): deeper reads more candidates the fused list already ranked low.
# Cost on 2 cores, onnx backend, 128 tokens: ~0.65 s for 20 candidates (rerank/bench.py).
RERANK_DEPTH = 20
# The thorough preset reranks as deep: with the shipped model, depth 50 gave paraphrases 0.261 / 0.276 (tune /
# check), the same as 20, for ~1.8 s instead of ~0.7 s per meaning query.
RERANK_DEPTH_THOROUGH = 20
# Intents where the default preset reranks. Rerank helps meaning queries (above) but costs ~40x the default
# preset's ~15 ms, so it runs on request (`--rerank on`) and in the thorough preset, not by default.
RERANK_INTENTS: frozenset[int] = frozenset()
# Keyword-leg query expansion (expansion.py). Off: on the dev set it lowered keyword MRR@10 from 0.880 to 0.868
# (concept 0.913 → 0.895): extra terms dilute the exact wording that docstring and message queries carry.
USE_QUERY_EXPANSION = False
# Intents whose fused list gets the centrality boost (hubs first).
CENTRALITY_INTENTS: frozenset[int] = frozenset(
    {search_pb2.INTENT_FIND_DEFINITION, search_pb2.INTENT_FIND_REFERENCES, search_pb2.INTENT_IMPACT_ANALYSIS}
)
# Changes to any ranking constant must change the cache's view of the configuration.
CONFIG_FINGERPRINT = repr(
    (
        sorted(CENTRALITY_INTENTS),
        LEG_DEPTH,
        RRF_K,
        NAIVE_RRF_K,
        DEFAULT_RESULTS,
        RERANK_DEPTH,
        sorted(RERANK_INTENTS),
        USE_QUERY_EXPANSION,
        sorted(router.INTENT_WEIGHTS.items()),
        (fusion.PER_FILE_DECAY, fusion.MAX_PER_FILE, fusion.CENTRALITY_SLOPE, fusion.CENTRALITY_CAP),
        (fusion.DEMOTE_GENERATED, fusion.DEMOTE_TESTS, router.DIRECT_CONFIDENCE),
        (topk.RATIO_TO_TOP, topk.MAX_DROP, topk.MIN_RESULTS, topk.ABSOLUTE_FLOOR),
        (
            CENTRALITY_DEPTH,
            adaptive.DECISIVE_COVERAGE,
            adaptive.DECISIVE_VECTOR_FACTOR,
        ),
        (topk.CONF_BIAS, topk.CONF_MARGIN, topk.CONF_AGREEMENT, topk.CONF_INTENT, topk.CONF_DIRECT),
        (topk.CONF_STRUCTURAL, topk.CONF_COVERAGE),
    )
)
TEST_WORDS = re.compile(r"\b(test|tests|testing|pytest|unittest|spec|mock)\b", re.IGNORECASE)

LegCall = Callable[[float], Awaitable[list[common_pb2.Hit]]]


@dataclass
class LegPlan:
    leg: int  # common_pb2.Leg
    weight: float
    call: LegCall | None  # None: skipped
    skip_reason: str = ""


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
            key = request_key(request, versions, CONFIG_FINGERPRINT)
            cached = None if request.no_cache else self.cache.get(key)
            if not request.no_cache:
                cache_lookups.add(1, {"result": "hit" if cached is not None else "miss"})
            if cached is not None:
                cached.cache_hit = True
                cached.total_latency_ms = (time.perf_counter() - started) * 1000
                span.set_attribute("cache_hit", True)
                return cached
            resp = await self._search(request, sorted(versions), time_remaining, started)
            span.set_attribute("intent", search_pb2.Intent.Name(resp.intent))
            span.set_attribute("hits", len(resp.hits))
            search_duration.record(
                resp.total_latency_ms,
                {"intent": search_pb2.Intent.Name(resp.intent), "strategy": resp.strategy},
            )
            for leg in resp.legs:
                if leg.status != common_pb2.LEG_STATUS_SKIPPED:
                    attrs = {"leg": _leg_name(leg.leg), "status": common_pb2.LegStatus.Name(leg.status)}
                    leg_duration.record(leg.latency_ms, attrs)
                if leg.status == common_pb2.LEG_STATUS_DEGRADED:
                    leg_degraded.add(1, {"leg": _leg_name(leg.leg)})
            if not any(r.status == common_pb2.LEG_STATUS_DEGRADED for r in resp.legs):
                self.cache.put(key, resp)  # a degraded answer is not worth repeating once the leg is back
            return resp

    async def _search(
        self,
        request: search_pb2.SearchRequest,
        repos: list[str],
        time_remaining: float | None,
        started: float,
    ) -> search_pb2.SearchResponse:
        query = request.query
        limit = request.limit
        mode = request.mode or search_pb2.SEARCH_MODE_AUTO
        preset = request.preset or search_pb2.PRESET_DEFAULT
        stage_ms: dict[str, float] = {}
        deadline = time.perf_counter() + (
            time_remaining if time_remaining is not None else DEFAULT_DEADLINE_S
        )

        t = time.perf_counter()
        with tracer.start_as_current_span("route") as span:
            route = classify(query)
            plans, strategy, route = self._plan(mode, preset, route, query, request, repos)
            span.set_attribute("intent", search_pb2.Intent.Name(route.intent))
            span.set_attribute("strategy", strategy)
        stage_ms["route"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        # Meaning queries quoted word for word from the code are settled by the keyword leg alone (adaptive.py).
        settle = (
            partial(adaptive.decisive, route.intent, query)
            if strategy == "rrf" and adaptive.DECISIVE_VECTOR_FACTOR == 0.0
            else None
        )
        reports, lists = await self._fan_out(
            plans, (deadline - time.perf_counter()) * LEG_DEADLINE_SHARE, repos, settle
        )
        if strategy == "direct" and not any(hits for _leg, _w, hits in lists):
            # The one leg the router trusted found nothing (say, a name defined nowhere): ask every leg.
            plans, _, route = self._plan(mode, preset, route, query, request, repos, allow_direct=False)
            reports, lists = await self._fan_out(
                plans, (deadline - time.perf_counter()) * LEG_DEADLINE_SHARE, repos
            )
            strategy = "rrf_after_direct"
        stage_ms["fan_out"] = (time.perf_counter() - t) * 1000

        if strategy == "rrf":
            lists, factor, why = adaptive.adapt_weights(route.intent, query, lists)
            if why:
                for r in reports:
                    if r.leg == common_pb2.LEG_VECTOR:
                        r.weight *= factor
                        r.reason = why
                route = replace(
                    route, weights={**route.weights, "semantic": route.weights["semantic"] * factor}
                )

        t = time.perf_counter()
        with tracer.start_as_current_span("fuse"):
            k = NAIVE_RRF_K if strategy == "naive_rrf" else RRF_K.get(preset, 40.0)
            fused = fusion.fuse(lists, k)
            use_centrality = route.intent in CENTRALITY_INTENTS and strategy not in ("forced", "naive_rrf")
            centrality = await self._centrality(fused) if use_centrality else [0.0] * len(fused)
            fused = fusion.apply_boosts(fused, centrality, bool(TEST_WORDS.search(query)))
        stage_ms["fuse"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        with tracer.start_as_current_span("rerank") as span:
            fused, rerank_report = await self._rerank(request, preset, route, strategy, fused, deadline)
            span.set_attribute("status", common_pb2.LegStatus.Name(rerank_report.status))
        reports.append(rerank_report)
        stage_ms["rerank"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        with tracer.start_as_current_span("topk"):
            cut, reason = topk.smart_topk(
                [f.score for f in fused], limit or DEFAULT_RESULTS, hard=bool(limit)
            )
        stage_ms["topk"] = (time.perf_counter() - t) * 1000

        resp = search_pb2.SearchResponse(
            intent=route.intent,  # type: ignore[arg-type]
            intent_confidence=route.confidence,
            strategy=strategy,
            weights=[search_pb2.ModalityWeight(modality=m, weight=w) for m, w in route.weights.items()],
            legs=reports,
            topk_reason=reason,
        )
        for f in fused[:cut]:
            hit = common_pb2.Hit()
            hit.CopyFrom(f.hit)
            hit.score = f.score
            del hit.leg_scores[:]
            hit.leg_scores.extend(f.leg_scores)
            del hit.found_by[:]
            hit.found_by.extend(f.found_by)  # type: ignore[arg-type]
            hit.boosts.extend(f.boosts)
            resp.hits.append(hit)
        answered = {
            r.leg
            for r in reports
            if r.status in (common_pb2.LEG_STATUS_OK, common_pb2.LEG_STATUS_PARTIAL)
            and r.leg != common_pb2.LEG_RERANK
        }
        keyword_hits = next((hits for leg, _w, hits in lists if leg == common_pb2.LEG_KEYWORD), [])
        resp.confidence = topk.confidence(
            fused,
            route.confidence,
            strategy == "direct",
            answered,
            adaptive.keyword_coverage(query, keyword_hits),
        )
        for name, ms in stage_ms.items():
            resp.stage_ms[name] = ms
        resp.total_latency_ms = (time.perf_counter() - started) * 1000
        return resp

    async def _rerank(
        self,
        request: search_pb2.SearchRequest,
        preset: int,
        route: Route,
        strategy: str,
        fused: list[fusion.FusedHit],
        deadline: float,
    ) -> tuple[list[fusion.FusedHit], common_pb2.LegReport]:
        def skipped(reason: str) -> tuple[list[fusion.FusedHit], common_pb2.LegReport]:
            return fused, common_pb2.LegReport(
                leg=common_pb2.LEG_RERANK, status=common_pb2.LEG_STATUS_SKIPPED, reason=reason
            )

        policy = request.rerank or search_pb2.RERANK_POLICY_AUTO
        if policy == search_pb2.RERANK_POLICY_OFF:
            return skipped("off by request")
        if policy == search_pb2.RERANK_POLICY_AUTO:
            if preset == search_pb2.PRESET_QUICK:
                return skipped("the quick preset does not rerank")
            if preset != search_pb2.PRESET_THOROUGH and route.intent not in RERANK_INTENTS:
                return skipped(
                    "off in the default preset for this intent (~0.65 s on CPU; see RERANK_INTENTS)"
                )
        if self.legs.rerank is None:
            return skipped("rerank service is not configured")
        if len(fused) < 2:
            return skipped("fewer than two hits")
        depth = RERANK_DEPTH_THOROUGH if preset == search_pb2.PRESET_THOROUGH else RERANK_DEPTH
        t = time.perf_counter()
        try:
            out, report = await rerank_stage.rerank(
                self.legs, request.query, fused, depth, max(0.05, deadline - time.perf_counter())
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

    async def _repositories(self, requested: list[str]) -> dict[str, int]:
        """The repositories to search with their index versions; NOT_FOUND for one that is not indexed."""
        known = {name: rec.index_version for name, rec in self.registry.load().items()}
        if isinstance(self.legs.keyword, ShardedStub):
            known.update(await self._shard_repositories())
        for r in requested:
            if r not in known:
                raise not_found(f"repository {r!r} is not indexed")
        return {r: known[r] for r in (requested or sorted(known))}

    async def _shard_repositories(self) -> dict[str, int]:
        """Repositories the shards hold (an orchestrator that did not index them still finds them)."""
        now = time.monotonic()
        if now - self._shard_repos[0] < SHARD_REPOS_TTL_S:
            return self._shard_repos[1]
        try:
            stats = await self.legs.keyword.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest(), timeout=2.0)  # type: ignore[union-attr]
            repos = {s.repository: int(s.index_version) for s in stats.bm25}
        except grpc.aio.AioRpcError:
            repos = self._shard_repos[1]  # every shard down: keep what was known, the legs will say degraded
        self._shard_repos = (now, repos)
        return repos

    # --- planning -------------------------------------------------------------------------------------------
    def _plan(
        self,
        mode: int,
        preset: int,
        route: Route,
        query: str,
        request: search_pb2.SearchRequest,
        repos: list[str],
        allow_direct: bool = True,
    ) -> tuple[list[LegPlan], str, Route]:
        target = route.target or query.strip()
        langs = list(request.languages)
        calls = {
            common_pb2.LEG_KEYWORD: lambda: self._keyword(repos, query, langs, request.path_glob),
            common_pb2.LEG_TRIGRAM: lambda: self._grep(
                repos, target, False, request.case_sensitive, langs, request.path_glob
            ),
            common_pb2.LEG_VECTOR: lambda: self._vector(repos, query, langs),
            common_pb2.LEG_DEFINITION: lambda: self._definitions(repos, target, langs),
            common_pb2.LEG_REFERENCES: lambda: self._references(repos, target),
            common_pb2.LEG_IMPACT: lambda: self._impact(repos, target),
        }
        # A forced mode asks one leg with the query as typed (a definition/callers/impact query may still be
        # phrased, so those use the router's target when it found one).
        name = route.target or query.strip()
        forced: dict[int, tuple[int, int, Callable[[], Awaitable[list[common_pb2.Hit]]]]] = {
            search_pb2.SEARCH_MODE_KEYWORD: (
                common_pb2.LEG_KEYWORD,
                search_pb2.INTENT_UNDERSTAND_CODE,
                calls[common_pb2.LEG_KEYWORD],
            ),
            search_pb2.SEARCH_MODE_LITERAL: (
                common_pb2.LEG_TRIGRAM,
                search_pb2.INTENT_EXACT_MATCH,
                partial(self._grep, repos, query, False, request.case_sensitive, langs, request.path_glob),
            ),
            search_pb2.SEARCH_MODE_REGEX: (
                common_pb2.LEG_TRIGRAM,
                search_pb2.INTENT_EXACT_MATCH,
                partial(self._grep, repos, query, True, request.case_sensitive, langs, request.path_glob),
            ),
            search_pb2.SEARCH_MODE_SEMANTIC: (
                common_pb2.LEG_VECTOR,
                search_pb2.INTENT_UNDERSTAND_CODE,
                calls[common_pb2.LEG_VECTOR],
            ),
            search_pb2.SEARCH_MODE_DEFINITION: (
                common_pb2.LEG_DEFINITION,
                search_pb2.INTENT_FIND_DEFINITION,
                partial(self._definitions, repos, name, langs),
            ),
            search_pb2.SEARCH_MODE_CALLERS: (
                common_pb2.LEG_REFERENCES,
                search_pb2.INTENT_FIND_REFERENCES,
                partial(self._references, repos, name),
            ),
            search_pb2.SEARCH_MODE_CALLEES: (
                common_pb2.LEG_REFERENCES,
                search_pb2.INTENT_FIND_REFERENCES,
                partial(self._callees, repos, query.strip()),
            ),
            search_pb2.SEARCH_MODE_IMPACT: (
                common_pb2.LEG_IMPACT,
                search_pb2.INTENT_IMPACT_ANALYSIS,
                partial(self._impact, repos, name),
            ),
        }
        if mode in forced:
            leg, intent, call = forced[mode]
            forced_route = Route(intent, 1.0, "forced", query, weights_for(intent))
            return [self._leg_plan(leg, 1.0, call)], "forced", forced_route
        if mode == search_pb2.SEARCH_MODE_NAIVE_HYBRID:
            legs = [common_pb2.LEG_KEYWORD, common_pb2.LEG_VECTOR]
            return [self._leg_plan(leg, 1.0, calls[leg]) for leg in legs], "naive_rrf", route
        if mode != search_pb2.SEARCH_MODE_AUTO:
            raise invalid(f"unknown search mode {mode}")
        return self._routed(route, preset, calls, allow_direct)

    def _routed(
        self,
        route: Route,
        preset: int,
        calls: dict[int, Callable[[], Awaitable[list[common_pb2.Hit]]]],
        allow_direct: bool = True,
    ) -> tuple[list[LegPlan], str, Route]:
        w = route.weights
        leg_weights: dict[int, float] = {
            common_pb2.LEG_VECTOR: w["semantic"],
            common_pb2.LEG_KEYWORD: w["text"],
            common_pb2.LEG_DEFINITION: w["structural"],
        }
        if route.intent == search_pb2.INTENT_EXACT_MATCH:
            leg_weights[common_pb2.LEG_TRIGRAM] = w["text"]
            leg_weights[common_pb2.LEG_KEYWORD] = w["text"] / 2
        if route.intent == search_pb2.INTENT_IMPACT_ANALYSIS:
            leg_weights[common_pb2.LEG_IMPACT] = w["graph"]
        elif route.target:
            leg_weights[common_pb2.LEG_REFERENCES] = w["graph"]
        if not route.target:
            leg_weights.pop(common_pb2.LEG_DEFINITION, None)
        if preset == search_pb2.PRESET_QUICK:
            leg_weights = {
                leg: wt
                for leg, wt in leg_weights.items()
                if leg in (common_pb2.LEG_KEYWORD, common_pb2.LEG_VECTOR, common_pb2.LEG_TRIGRAM)
            }
        strategy = "rrf"
        if allow_direct and route.confidence >= DIRECT_CONFIDENCE and preset != search_pb2.PRESET_THOROUGH:
            top = max(leg_weights, key=lambda leg: leg_weights[leg])
            leg_weights = {top: leg_weights[top]}
            strategy = "direct"
        plans = []
        for leg, weight in sorted(leg_weights.items(), key=lambda kv: -kv[1]):
            if weight <= 0:
                plans.append(LegPlan(leg, 0.0, None, "weight 0 for this intent"))
            else:
                plans.append(self._leg_plan(leg, weight, calls[leg]))
        return plans, strategy, route

    def _leg_plan(
        self, leg: int, weight: float, call: Callable[[], Awaitable[list[common_pb2.Hit]]]
    ) -> LegPlan:
        service = {
            common_pb2.LEG_KEYWORD: "keyword",
            common_pb2.LEG_TRIGRAM: "keyword",
            common_pb2.LEG_VECTOR: "vector",
            common_pb2.LEG_DEFINITION: "graph",
            common_pb2.LEG_REFERENCES: "graph",
            common_pb2.LEG_IMPACT: "graph",
        }[leg]
        if self.legs.legs[service].stub is None:
            return LegPlan(leg, weight, None, f"{service} service is not configured")
        return LegPlan(leg, weight, lambda _budget: call())

    # --- fan-out --------------------------------------------------------------------------------------------
    async def _fan_out(
        self,
        plans: list[LegPlan],
        budget_s: float,
        repos: list[str],
        settle: Callable[[list[common_pb2.Hit]], str] | None = None,
    ) -> tuple[list[common_pb2.LegReport], list[tuple[int, float, list[common_pb2.Hit]]]]:
        budget_s = max(budget_s, MIN_LEG_BUDGET_S)

        async def run(plan: LegPlan) -> tuple[common_pb2.LegReport, list[common_pb2.Hit]]:
            with tracer.start_as_current_span(f"leg.{_leg_name(plan.leg)}") as span:
                span.set_attribute("leg", _leg_name(plan.leg))
                span.set_attribute("repository", ",".join(repos))
                span.set_attribute("k", LEG_DEPTH)
                report, hits = await run_leg(plan)
                span.set_attribute("hits", len(hits))
                span.set_attribute("degraded", report.status == common_pb2.LEG_STATUS_DEGRADED)
                span.set_attribute("status", common_pb2.LegStatus.Name(report.status))
                return report, hits

        async def run_leg(plan: LegPlan) -> tuple[common_pb2.LegReport, list[common_pb2.Hit]]:
            report = common_pb2.LegReport(leg=plan.leg, weight=plan.weight)  # type: ignore[arg-type]
            if plan.call is None:
                report.status = common_pb2.LEG_STATUS_SKIPPED
                report.reason = plan.skip_reason
                return report, []
            t = time.perf_counter()
            shard_failures: list[tuple[str, str]] = []
            SHARD_FAILURES.set(shard_failures)  # this task's own context: filled by sharded stubs
            details: list[str] = []
            LEG_DETAIL.set(details)  # what the leg answered from (the vector leg's tier), filled by its call
            try:
                hits = await asyncio.wait_for(plan.call(budget_s), timeout=budget_s)
                report.status = common_pb2.LEG_STATUS_OK
                if shard_failures:
                    report.status = common_pb2.LEG_STATUS_DEGRADED
                    report.reason = "; ".join(
                        f"shard {a} failed ({r}), its repositories are missing" for a, r in shard_failures
                    )
            except asyncio.TimeoutError:
                hits, report.status, report.reason = (
                    [],
                    common_pb2.LEG_STATUS_DEGRADED,
                    f"timed out after {budget_s:.2f}s",
                )
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
                    raise invalid(e.details() or "invalid argument") from None
                hits, report.status = [], common_pb2.LEG_STATUS_DEGRADED
                report.reason = f"{e.code().name}: {e.details()}"
            except PartialResult as p:
                hits, report.status, report.reason = p.hits, common_pb2.LEG_STATUS_PARTIAL, p.reason
            report.latency_ms = (time.perf_counter() - t) * 1000
            report.hits = len(hits)
            report.detail = "; ".join(details)
            return report, hits

        tasks = [asyncio.create_task(run(p)) for p in plans]
        settled = await self._settle_early(plans, tasks, settle)
        results: list[tuple[common_pb2.LegReport, list[common_pb2.Hit]]] = []
        for plan, t in zip(plans, tasks, strict=True):
            if t in settled:  # stopped waiting for it: the other legs' answer settles the query
                report = common_pb2.LegReport(
                    leg=plan.leg, weight=plan.weight, status=common_pb2.LEG_STATUS_SKIPPED
                )  # type: ignore[arg-type]
                report.reason, report.latency_ms = settled[t]
                results.append((report, []))
            else:
                results.append(await t)
        reports = [r for r, _ in results]
        lists = [
            (p.leg, p.weight, hits)
            for p, (r, hits) in zip(plans, results, strict=True)
            if p.call is not None and r.status != common_pb2.LEG_STATUS_SKIPPED
        ]
        return reports, lists

    async def _settle_early(
        self,
        plans: list[LegPlan],
        tasks: list[asyncio.Task[tuple[common_pb2.LegReport, list[common_pb2.Hit]]]],
        settle: Callable[[list[common_pb2.Hit]], str] | None,
    ) -> dict[asyncio.Task, tuple[str, float]]:
        """Cancels the vector leg when the keyword leg's answer makes it moot; {cancelled task: (why, ms)}."""
        legs = [p.leg if p.call is not None else None for p in plans]
        if settle is None or common_pb2.LEG_KEYWORD not in legs or common_pb2.LEG_VECTOR not in legs:
            return {}
        t0 = time.perf_counter()
        vector = tasks[legs.index(common_pb2.LEG_VECTOR)]
        report, hits = await tasks[legs.index(common_pb2.LEG_KEYWORD)]
        if vector.done() or report.status != common_pb2.LEG_STATUS_OK:
            return {}
        why = settle(hits)
        if not why:
            return {}
        vector.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await vector
        return {vector: (f"not needed: {why}", (time.perf_counter() - t0) * 1000)}

    async def _centrality(self, fused: list[fusion.FusedHit]) -> list[float]:
        if self.legs.graph is None or not fused:
            return [0.0] * len(fused)
        head = fused[:CENTRALITY_DEPTH]
        try:
            resp = await self.legs.graph.Centrality(
                graph_pb2.CentralityRequest(locations=[f.hit.location for f in head]), timeout=1.0
            )
            values = list(resp.values) if len(resp.values) == len(head) else [0.0] * len(head)
        except grpc.aio.AioRpcError:
            values = [0.0] * len(head)
        return values + [0.0] * (len(fused) - len(head))

    # --- leg calls ------------------------------------------------------------------------------------------
    async def _keyword(
        self, repos: list[str], query: str, langs: list[str], glob: str
    ) -> list[common_pb2.Hit]:
        assert self.legs.keyword is not None
        if USE_QUERY_EXPANSION:
            query = " ".join([query, *expand(query)])
        resp = await self.legs.keyword.KeywordSearch(
            keyword_pb2.KeywordSearchRequest(
                repositories=repos, query=query, limit=LEG_DEPTH, languages=langs, path_glob=glob
            )
        )
        return list(resp.hits)

    async def _grep(
        self, repos: list[str], pattern: str, regex: bool, case: bool, langs: list[str], glob: str
    ) -> list[common_pb2.Hit]:
        assert self.legs.keyword is not None
        syntax = keyword_pb2.PATTERN_SYNTAX_REGEX if regex else keyword_pb2.PATTERN_SYNTAX_LITERAL
        resp = await self.legs.keyword.Grep(
            keyword_pb2.GrepRequest(
                repositories=repos,
                pattern=pattern,
                syntax=syntax,
                case_sensitive=case,
                limit=LEG_DEPTH,
                languages=langs,
                path_glob=glob,
            )
        )
        return list(resp.hits)

    async def _vector(self, repos: list[str], query: str, langs: list[str]) -> list[common_pb2.Hit]:
        assert self.legs.vector is not None
        resp = await self.legs.vector.VectorSearch(
            vector_pb2.VectorSearchRequest(repositories=repos, text=query, limit=LEG_DEPTH, languages=langs)
        )
        if resp.tier and (details := LEG_DETAIL.get()) is not None:
            details.append(f"tier {resp.tier}, model {resp.model}")
        if resp.partial:
            raise PartialResult(list(resp.hits), f"embedded {resp.embedded} of {resp.total} chunks so far")
        return list(resp.hits)

    async def _definitions(self, repos: list[str], name: str, langs: list[str]) -> list[common_pb2.Hit]:
        assert self.legs.graph is not None
        resp = await self.legs.graph.FindDefinitions(
            graph_pb2.FindDefinitionsRequest(
                repositories=repos, name=name, limit=LEG_DEPTH, language=langs[0] if len(langs) == 1 else ""
            )
        )
        return [_symbol_hit(s, common_pb2.LEG_DEFINITION, rank) for rank, s in enumerate(resp.symbols)]

    async def _references(self, repos: list[str], name: str) -> list[common_pb2.Hit]:
        assert self.legs.graph is not None
        resp = await self.legs.graph.FindReferences(
            graph_pb2.FindReferencesRequest(repositories=repos, name=name, limit=LEG_DEPTH)
        )
        return [_reference_hit(r, rank) for rank, r in enumerate(resp.references)]

    async def _callees(self, repos: list[str], name: str) -> list[common_pb2.Hit]:
        assert self.legs.graph is not None
        resp = await self.legs.graph.FindCallees(
            graph_pb2.FindCalleesRequest(repositories=repos, name=name, limit=LEG_DEPTH)
        )
        return [_symbol_hit(s, common_pb2.LEG_REFERENCES, rank) for rank, s in enumerate(resp.callees)]

    async def _impact(self, repos: list[str], target: str) -> list[common_pb2.Hit]:
        assert self.legs.graph is not None
        resp = await self.legs.graph.Impact(
            graph_pb2.ImpactRequest(repositories=repos, target=target, limit=LEG_DEPTH)
        )
        hits = []
        for rank, item in enumerate(resp.items):
            score = 1.0 / item.distance if item.distance else 1.0
            hits.append(
                common_pb2.Hit(
                    location=item.location,
                    snippet=f"{item.via} {item.symbol or item.location.path} (distance {item.distance})",
                    score=score,
                    leg_scores=[common_pb2.LegScore(leg=common_pb2.LEG_IMPACT, rank=rank, score=score)],
                    found_by=[common_pb2.LEG_IMPACT],
                    symbol=item.symbol,
                )
            )
        return hits


def _leg_name(leg: int) -> str:
    return common_pb2.Leg.Name(leg).removeprefix("LEG_").lower()


# Set per leg call by the fan-out; a leg's call appends what it answered from (LegReport.detail).
LEG_DETAIL: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("leg_detail", default=None)


class PartialResult(Exception):
    """A leg answered over part of its data (the vector leg while embeddings fill in)."""

    def __init__(self, hits: list[common_pb2.Hit], reason: str) -> None:
        super().__init__(reason)
        self.hits = hits
        self.reason = reason


def _symbol_hit(s: graph_pb2.Symbol, leg: int, rank: int) -> common_pb2.Hit:
    score = 1.0 / (1 + rank)
    return common_pb2.Hit(
        location=s.location,
        snippet=s.signature,
        score=score,
        leg_scores=[common_pb2.LegScore(leg=leg, rank=rank, score=score)],  # type: ignore[arg-type]
        found_by=[leg],  # type: ignore[list-item]
        language=s.language,
        symbol=s.qualified_name,
        breadcrumb=[p for p in s.parent.split(".") if p] + [s.name],
    )


def _reference_hit(r: graph_pb2.Reference, rank: int) -> common_pb2.Hit:
    score = 1.0 / (1 + rank)
    return common_pb2.Hit(
        location=r.location,
        snippet=r.snippet,
        score=score,
        leg_scores=[common_pb2.LegScore(leg=common_pb2.LEG_REFERENCES, rank=rank, score=score)],
        found_by=[common_pb2.LEG_REFERENCES],
        symbol=r.caller,
        match_lines=[r.location.start_line],
    )
