"""The fan-out: every leg of a plan asked in parallel, each under its own budget, each answer reported.

A leg that fails or runs out of time is reported degraded and the others still answer; a leg whose answer covers
only part of its data (the vector leg while embeddings fill in) is reported partial. Only an INVALID_ARGUMENT from a
leg fails the search: the client's request is wrong, not the leg. Each leg call comes back as a value: what its
response says (`LegAnswer`), then its report and hits (`LegResult`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from codesearch.common.errors import invalid
from codesearch.common.labels import label
from codesearch.common.telemetry import tracer
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.plan import LEG_SERVICE, LegPlan
from codesearch.orchestrator.ranking.fusion import RankedList
from codesearch.orchestrator.sharding import ShardedStub
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, vector_pb2

LEG_DEADLINE_SHARE = 0.8  # legs get this share of the time left; fusion and the reply need the rest
MIN_LEG_BUDGET_S = 0.01  # below this no leg can answer; the call then degrades rather than never being sent

Settle = Callable[
    [list[common_pb2.Hit]], str
]  # why the keyword leg's hits settle the query ("" if they do not)


@dataclass
class FanOut:
    reports: list[common_pb2.LegReport]  # one per planned leg, in plan order
    lists: list[RankedList]  # the legs that answered: (leg, weight, hits)

    def hits_of(self, leg: int) -> list[common_pb2.Hit]:
        return next((hits for lg, _w, hits in self.lists if lg == leg), [])


@dataclass(frozen=True)
class LegAnswer:
    """What one leg's response says, as the fan-out reads it."""

    hits: list[common_pb2.Hit]
    detail: str = ""  # what the leg answered from (LegReport.detail)
    partial: str = ""  # why the answer covers only part of the leg's data ("" when it covers all of it)
    upgrading: bool = False  # a better tier is filling in (LegReport.upgrading)


@dataclass(frozen=True)
class LegResult:
    """One leg call: its report (status, reason, timing, detail) and its hits."""

    report: common_pb2.LegReport
    hits: list[common_pb2.Hit]


def leg_budget(deadline: float) -> float:
    """Each leg's budget when the search must answer by `deadline` (a perf_counter time)."""
    return max((deadline - time.perf_counter()) * LEG_DEADLINE_SHARE, MIN_LEG_BUDGET_S)


def leg_name(leg: int) -> str:
    return label(common_pb2.Leg, leg, "LEG_")


async def fan_out(
    legs: LegClients,
    plan: list[LegPlan],
    repos: list[str],
    settle: Settle | None = None,
    deadline: float | None = None,
) -> FanOut:
    """Runs every leg of the plan at once, none past `deadline` (a perf_counter time: each leg's budget is cut
    to leg_budget(deadline)); `settle` may stop the wait for the vector leg (ranking/adaptive.py)."""

    async def run(p: LegPlan) -> LegResult:
        with tracer.start_as_current_span(f"leg.{leg_name(p.leg)}") as span:
            span.set_attribute("leg", leg_name(p.leg))
            span.set_attribute("repository", ",".join(repos))
            span.set_attribute("k", getattr(p.request, "limit", 0))
            budget = p.budget_s if deadline is None else min(p.budget_s, leg_budget(deadline))
            result = await _run_leg(legs, p, budget)
            span.set_attribute("hits", len(result.hits))
            span.set_attribute("degraded", result.report.status == common_pb2.LEG_STATUS_DEGRADED)
            span.set_attribute("status", common_pb2.LegStatus.Name(result.report.status))
            return result

    tasks = [asyncio.create_task(run(p)) for p in plan]
    settled = await _settle_early(plan, tasks, settle)
    results: list[LegResult] = []
    for p, t in zip(plan, tasks, strict=True):
        if t in settled:  # stopped waiting for it: the other legs' answer settles the query
            report = common_pb2.LegReport(leg=p.leg, weight=p.weight, status=common_pb2.LEG_STATUS_SKIPPED)
            report.reason, report.latency_ms = settled[t]
            results.append(LegResult(report, []))
        else:
            results.append(await t)
    lists = [
        (p.leg, p.weight, r.hits)
        for p, r in zip(plan, results, strict=True)
        if p.request is not None and r.report.status != common_pb2.LEG_STATUS_SKIPPED
    ]
    return FanOut([r.report for r in results], lists)


# In the vector leg's LegReport.detail when the static tier's query was boosted by the transformer (the eval
# harness counts such answers).
BOOSTED_QUERY = "query boosted"
# In the keyword leg's LegReport.detail when its answer matched word stems (plan.STEM_BELOW_COVERAGE).
STEMMED_DETAIL = "word stems: the words as written did not meet in one chunk"


async def _run_leg(legs: LegClients, p: LegPlan, budget_s: float) -> LegResult:
    report = common_pb2.LegReport(leg=p.leg, weight=p.weight)
    if p.request is None:
        report.status = common_pb2.LEG_STATUS_SKIPPED
        report.reason = p.skip_reason
        return LegResult(report, [])
    t = time.perf_counter()
    timed_out = f"timed out after {budget_s:.2f}s"
    answer = LegAnswer([])
    try:
        answer, shard_failures = await asyncio.wait_for(call_leg(legs, p, budget_s), timeout=budget_s)
        report.status = common_pb2.LEG_STATUS_OK
        if answer.partial:
            report.status, report.reason = common_pb2.LEG_STATUS_PARTIAL, answer.partial
        elif shard_failures:
            report.status = common_pb2.LEG_STATUS_DEGRADED
            report.reason = "; ".join(
                f"shard {a} failed ({r}), its repositories are missing" for a, r in shard_failures
            )
    except asyncio.TimeoutError:
        report.status, report.reason = common_pb2.LEG_STATUS_DEGRADED, timed_out
    except grpc.aio.AioRpcError as e:
        if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
            raise invalid(e.details() or "invalid argument") from None
        report.status = common_pb2.LEG_STATUS_DEGRADED
        # The leg's own deadline (the budget, sent with the call) reads the same as the orchestrator's.
        report.reason = (
            timed_out if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED else f"{e.code().name}: {e.details()}"
        )
    report.latency_ms = (time.perf_counter() - t) * 1000
    report.hits = len(answer.hits)
    report.detail = answer.detail
    report.upgrading = answer.upgrading
    return LegResult(report, answer.hits)


async def call_leg(
    legs: LegClients, p: LegPlan, budget_s: float | None = None
) -> tuple[LegAnswer, list[tuple[str, str]]]:
    """Sends the plan's request to its leg with the budget (the plan's unless given) as the RPC deadline; the
    answer, and the shards that failed while others answered ((address, reason); none for an unsharded leg)."""
    method, read = RPCS[type(p.request)]
    stub: Any = legs.legs[LEG_SERVICE[p.leg]].stub
    timeout = p.budget_s if budget_s is None else budget_s
    if isinstance(stub, ShardedStub):
        resp, failures = await stub.answer(method, p.request, timeout=timeout)
    else:
        resp, failures = await getattr(stub, method)(p.request, timeout=timeout), []
    return read(resp, p.leg), failures


async def _settle_early(
    plan: list[LegPlan],
    tasks: list[asyncio.Task[LegResult]],
    settle: Settle | None,
) -> dict[asyncio.Task[Any], tuple[str, float]]:
    """Drops the vector leg when the keyword leg's answer makes it moot; {dropped task: (why, ms)}.

    Dropped whether or not its answer has arrived already, so that the ranking never depends on which leg
    answered first (it did: 94 of the dev set's 475 queries ranked differently from run to run under load)."""
    asked = [p.leg if p.request is not None else None for p in plan]
    if settle is None or common_pb2.LEG_KEYWORD not in asked or common_pb2.LEG_VECTOR not in asked:
        return {}
    t0 = time.perf_counter()
    vector = tasks[asked.index(common_pb2.LEG_VECTOR)]
    keyword = await tasks[asked.index(common_pb2.LEG_KEYWORD)]
    # Read whatever the keyword leg found: a sharded leg with a shard down (DEGRADED) still answered for the rest.
    why = settle(keyword.hits)
    if not why:
        return {}
    vector.cancel()  # a no-op when it has answered already
    with contextlib.suppress(asyncio.CancelledError):
        await vector
    return {vector: (f"not needed: {why}", (time.perf_counter() - t0) * 1000)}


async def centrality(legs: LegClients, locations: list[common_pb2.Location]) -> list[float]:
    """The graph's centrality of each location (0.0 for all when the graph leg cannot say)."""
    if legs.graph is None or not locations:
        return [0.0] * len(locations)
    try:
        resp = await legs.graph.Centrality(graph_pb2.CentralityRequest(locations=locations), timeout=1.0)
    except grpc.aio.AioRpcError:
        return [0.0] * len(locations)
    return list(resp.values) if len(resp.values) == len(locations) else [0.0] * len(locations)


# --- what each leg's response says ----------------------------------------------------------------------------
def _hits(resp: Any, _leg: common_pb2.Leg) -> LegAnswer:
    return LegAnswer(list(resp.hits))


def _keyword_hits(resp: keyword_pb2.KeywordSearchResponse, _leg: common_pb2.Leg) -> LegAnswer:
    return LegAnswer(list(resp.hits), detail=STEMMED_DETAIL if resp.stemmed else "")


def _vector_hits(resp: vector_pb2.VectorSearchResponse, _leg: common_pb2.Leg) -> LegAnswer:
    detail = ""
    if resp.tier:
        detail = (
            f"tier {resp.tier}, model {resp.model}"
            + (f", {BOOSTED_QUERY} by {resp.query_encoder}" if resp.query_boosted else "")
            + (f", re-scored by {resp.rescored_by}" if resp.rescored_by else "")
            + (" (a better tier is filling in)" if resp.upgrading else "")
        )
    partial = f"embedded {resp.embedded} of {resp.total} chunks so far" if resp.partial else ""
    return LegAnswer(list(resp.hits), detail, partial, resp.upgrading)


def _definition_hits(resp: graph_pb2.FindDefinitionsResponse, leg: common_pb2.Leg) -> LegAnswer:
    return LegAnswer([symbol_hit(s, leg, rank) for rank, s in enumerate(resp.symbols)])


def _callee_hits(resp: graph_pb2.FindCalleesResponse, leg: common_pb2.Leg) -> LegAnswer:
    return LegAnswer([symbol_hit(s, leg, rank) for rank, s in enumerate(resp.callees)])


def _reference_hits(resp: graph_pb2.FindReferencesResponse, _leg: common_pb2.Leg) -> LegAnswer:
    return LegAnswer([reference_hit(r, rank) for rank, r in enumerate(resp.references)])


def reference_hit(r: graph_pb2.Reference, rank: int) -> common_pb2.Hit:
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


def _impact_hits(resp: graph_pb2.ImpactResponse, _leg: common_pb2.Leg) -> LegAnswer:
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
    return LegAnswer(hits)


def symbol_hit(s: graph_pb2.Symbol, leg: common_pb2.Leg, rank: int) -> common_pb2.Hit:
    score = 1.0 / (1 + rank)
    return common_pb2.Hit(
        location=s.location,
        snippet=s.signature,
        score=score,
        leg_scores=[common_pb2.LegScore(leg=leg, rank=rank, score=score)],
        found_by=[leg],
        language=s.language,
        symbol=s.qualified_name,
        breadcrumb=[p for p in s.parent.split(".") if p] + [s.name],
    )


# Request type -> (RPC method, how its response is read). The request a plan holds decides the RPC.
RPCS: dict[type, tuple[str, Callable[[Any, common_pb2.Leg], LegAnswer]]] = {
    keyword_pb2.KeywordSearchRequest: ("KeywordSearch", _keyword_hits),
    keyword_pb2.GrepRequest: ("Grep", _hits),
    vector_pb2.VectorSearchRequest: ("VectorSearch", _vector_hits),
    graph_pb2.FindDefinitionsRequest: ("FindDefinitions", _definition_hits),
    graph_pb2.FindReferencesRequest: ("FindReferences", _reference_hits),
    graph_pb2.FindCalleesRequest: ("FindCallees", _callee_hits),
    graph_pb2.ImpactRequest: ("Impact", _impact_hits),
}
