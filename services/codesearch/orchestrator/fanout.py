"""The fan-out: every leg of a plan asked in parallel, each under its own budget, each answer reported.

A leg that fails or runs out of time is reported degraded and the others still answer; a leg whose answer covers
only part of its data (the vector leg while embeddings fill in) is reported partial. Only an INVALID_ARGUMENT from a
leg fails the search: the client's request is wrong, not the leg.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
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
from codesearch.orchestrator.sharding import SHARD_FAILURES
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


def leg_budget(deadline: float) -> float:
    """Each leg's budget when the search must answer by `deadline` (a perf_counter time)."""
    return max((deadline - time.perf_counter()) * LEG_DEADLINE_SHARE, MIN_LEG_BUDGET_S)


def leg_name(leg: int) -> str:
    return label(common_pb2.Leg, leg, "LEG_")


class PartialResult(Exception):
    """A leg answered over part of its data (the vector leg while embeddings fill in)."""

    def __init__(self, hits: list[common_pb2.Hit], reason: str) -> None:
        super().__init__(reason)
        self.hits = hits
        self.reason = reason


async def fan_out(
    legs: LegClients, plan: list[LegPlan], repos: list[str], settle: Settle | None = None
) -> FanOut:
    """Runs every leg of the plan at once; `settle` may stop the wait for the vector leg (ranking/adaptive.py)."""

    async def run(p: LegPlan) -> tuple[common_pb2.LegReport, list[common_pb2.Hit]]:
        with tracer.start_as_current_span(f"leg.{leg_name(p.leg)}") as span:
            span.set_attribute("leg", leg_name(p.leg))
            span.set_attribute("repository", ",".join(repos))
            span.set_attribute("k", getattr(p.request, "limit", 0))
            report, hits = await _run_leg(legs, p)
            span.set_attribute("hits", len(hits))
            span.set_attribute("degraded", report.status == common_pb2.LEG_STATUS_DEGRADED)
            span.set_attribute("status", common_pb2.LegStatus.Name(report.status))
            return report, hits

    tasks = [asyncio.create_task(run(p)) for p in plan]
    settled = await _settle_early(plan, tasks, settle)
    results: list[tuple[common_pb2.LegReport, list[common_pb2.Hit]]] = []
    for p, t in zip(plan, tasks, strict=True):
        if t in settled:  # stopped waiting for it: the other legs' answer settles the query
            report = common_pb2.LegReport(leg=p.leg, weight=p.weight, status=common_pb2.LEG_STATUS_SKIPPED)
            report.reason, report.latency_ms = settled[t]
            results.append((report, []))
        else:
            results.append(await t)
    lists = [
        (p.leg, p.weight, hits)
        for p, (r, hits) in zip(plan, results, strict=True)
        if p.request is not None and r.status != common_pb2.LEG_STATUS_SKIPPED
    ]
    return FanOut([r for r, _ in results], lists)


# In the vector leg's LegReport.detail when the static tier's query was boosted by the transformer (the eval
# harness counts such answers).
BOOSTED_QUERY = "query boosted"
# In the keyword leg's LegReport.detail when its answer matched word stems (plan.STEM_BELOW_COVERAGE).
STEMMED_DETAIL = "word stems: the words as written did not meet in one chunk"
# Set per leg call by the fan-out; a leg's answer appends what it answered from (LegReport.detail).
LEG_DETAIL: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("leg_detail", default=None)
# Set per leg call likewise; the vector leg's answer marks it when a better tier is still filling in.
LEG_UPGRADING: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "leg_upgrading", default=None
)


async def _run_leg(legs: LegClients, p: LegPlan) -> tuple[common_pb2.LegReport, list[common_pb2.Hit]]:
    report = common_pb2.LegReport(leg=p.leg, weight=p.weight)
    if p.request is None:
        report.status = common_pb2.LEG_STATUS_SKIPPED
        report.reason = p.skip_reason
        return report, []
    t = time.perf_counter()
    shard_failures: list[tuple[str, str]] = []
    SHARD_FAILURES.set(shard_failures)  # this task's own context: filled by sharded stubs
    details: list[str] = []
    LEG_DETAIL.set(details)  # what the leg answered from (the vector leg's tier), filled by its answer
    upgrading: list[bool] = []
    LEG_UPGRADING.set(upgrading)
    timed_out = f"timed out after {p.budget_s:.2f}s"
    try:
        hits = await asyncio.wait_for(call_leg(legs, p), timeout=p.budget_s)
        report.status = common_pb2.LEG_STATUS_OK
        if shard_failures:
            report.status = common_pb2.LEG_STATUS_DEGRADED
            report.reason = "; ".join(
                f"shard {a} failed ({r}), its repositories are missing" for a, r in shard_failures
            )
    except asyncio.TimeoutError:
        hits, report.status, report.reason = [], common_pb2.LEG_STATUS_DEGRADED, timed_out
    except grpc.aio.AioRpcError as e:
        if e.code() == grpc.StatusCode.INVALID_ARGUMENT:
            raise invalid(e.details() or "invalid argument") from None
        hits, report.status = [], common_pb2.LEG_STATUS_DEGRADED
        # The leg's own deadline (the budget, sent with the call) reads the same as the orchestrator's.
        report.reason = (
            timed_out if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED else f"{e.code().name}: {e.details()}"
        )
    except PartialResult as partial:
        hits, report.status, report.reason = partial.hits, common_pb2.LEG_STATUS_PARTIAL, partial.reason
    report.latency_ms = (time.perf_counter() - t) * 1000
    report.hits = len(hits)
    report.detail = "; ".join(details)
    report.upgrading = any(upgrading)
    return report, hits


async def call_leg(legs: LegClients, p: LegPlan) -> list[common_pb2.Hit]:
    """Sends the plan's request to its leg with the plan's budget as the RPC deadline; the answer as hits."""
    method, to_hits = RPCS[type(p.request)]
    stub: Any = legs.legs[LEG_SERVICE[p.leg]].stub
    resp = await getattr(stub, method)(p.request, timeout=p.budget_s)
    return to_hits(resp, p.leg)


async def _settle_early(
    plan: list[LegPlan],
    tasks: list[asyncio.Task[tuple[common_pb2.LegReport, list[common_pb2.Hit]]]],
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
    report, hits = await tasks[asked.index(common_pb2.LEG_KEYWORD)]
    if report.status != common_pb2.LEG_STATUS_OK:
        return {}
    why = settle(hits)
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


# --- each leg's answer as hits --------------------------------------------------------------------------------
def _hits(resp: Any, _leg: int) -> list[common_pb2.Hit]:
    return list(resp.hits)


def _keyword_hits(resp: keyword_pb2.KeywordSearchResponse, _leg: int) -> list[common_pb2.Hit]:
    if resp.stemmed and (details := LEG_DETAIL.get()) is not None:
        details.append(STEMMED_DETAIL)
    return list(resp.hits)


def _vector_hits(resp: vector_pb2.VectorSearchResponse, _leg: int) -> list[common_pb2.Hit]:
    if resp.tier and (details := LEG_DETAIL.get()) is not None:
        details.append(
            f"tier {resp.tier}, model {resp.model}"
            + (f", {BOOSTED_QUERY} by {resp.query_encoder}" if resp.query_boosted else "")
            + (f", re-scored by {resp.rescored_by}" if resp.rescored_by else "")
            + (" (a better tier is filling in)" if resp.upgrading else "")
        )
    if resp.upgrading and (upgrading := LEG_UPGRADING.get()) is not None:
        upgrading.append(True)
    if resp.partial:
        raise PartialResult(list(resp.hits), f"embedded {resp.embedded} of {resp.total} chunks so far")
    return list(resp.hits)


def _definition_hits(resp: graph_pb2.FindDefinitionsResponse, leg: int) -> list[common_pb2.Hit]:
    return [symbol_hit(s, leg, rank) for rank, s in enumerate(resp.symbols)]


def _callee_hits(resp: graph_pb2.FindCalleesResponse, leg: int) -> list[common_pb2.Hit]:
    return [symbol_hit(s, leg, rank) for rank, s in enumerate(resp.callees)]


def _reference_hits(resp: graph_pb2.FindReferencesResponse, _leg: int) -> list[common_pb2.Hit]:
    return [reference_hit(r, rank) for rank, r in enumerate(resp.references)]


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


def _impact_hits(resp: graph_pb2.ImpactResponse, _leg: int) -> list[common_pb2.Hit]:
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


def symbol_hit(s: graph_pb2.Symbol, leg: int, rank: int) -> common_pb2.Hit:
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


# Request type -> (RPC method, how its answer becomes hits). The request a plan holds decides the RPC.
RPCS: dict[type, tuple[str, Callable[[Any, int], list[common_pb2.Hit]]]] = {
    keyword_pb2.KeywordSearchRequest: ("KeywordSearch", _keyword_hits),
    keyword_pb2.GrepRequest: ("Grep", _hits),
    vector_pb2.VectorSearchRequest: ("VectorSearch", _vector_hits),
    graph_pb2.FindDefinitionsRequest: ("FindDefinitions", _definition_hits),
    graph_pb2.FindReferencesRequest: ("FindReferences", _reference_hits),
    graph_pb2.FindCalleesRequest: ("FindCallees", _callee_hits),
    graph_pb2.ImpactRequest: ("Impact", _impact_hits),
}
