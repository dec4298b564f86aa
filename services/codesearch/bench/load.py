"""Load test: N concurrent clients send a realistic query mix to a running server for a bounded time.

The queries are drawn from the indexed repository through the server's own API (identifiers from keyword
hits, string literals from their snippets) or read from a file, and cover every intent: definitions,
"who calls X", quoted strings, regexes, "how does X work" and impact questions. Reports throughput,
latency percentiles and errors by status code, overall and per kind of query.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import grpc

from codesearch.common.security import aio_channel, sync_channel
from codesearch.config import MAX_MESSAGE_BYTES, Settings
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

DEFAULT_CLIENTS = 16  # the target concurrency on a 2-core machine
DEFAULT_SECONDS = 60.0  # long enough for p99 to mean something (thousands of calls)
DEFAULT_DEADLINE_S = 10.0  # a client's per-call deadline; a slower answer counts as DEADLINE_EXCEEDED
WARMUP_S = 2.0  # first calls open snapshots and fill OS caches; not what a steady state looks like
SEED_WORDS = ("parse", "read", "open", "error", "connect", "encode", "format", "close", "send", "lock")
SAMPLE_SEARCH_LIMIT = 50  # hits per seed word: plenty of identifiers and literals
MIN_IDENT_CHARS = 4  # shorter names ("f", "run") are not what people look up
LITERAL_RE = re.compile(r"""["']([A-Za-z][A-Za-z0-9 _:.,%-]{5,40})["']""")
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
]


@dataclass(frozen=True)
class Query:
    kind: str  # definition, callers, literal, regex, understand, impact, keyword
    text: str
    mode: search_pb2.SearchMode = search_pb2.SEARCH_MODE_AUTO


@dataclass
class Sample:
    kind: str
    latency_ms: float
    code: str  # "OK" or the status name
    degraded: int = 0


class PhaseFigures(TypedDict):
    """A load's headline figures (the soak reads the well-behaved clients' alone and beside the fuzz)."""

    calls: int
    p50_ms: float
    p99_ms: float
    errors: dict[str, int]  # calls per status code other than OK


@dataclass
class LoadResult:
    clients: int
    seconds: float
    samples: list[Sample] = field(default_factory=list)

    def figures(self) -> PhaseFigures:
        pct = percentiles([s.latency_ms for s in self.samples if s.code == "OK"])
        errors = Counter(s.code for s in self.samples if s.code != "OK")
        return {
            "calls": len(self.samples),
            "p50_ms": pct["p50_ms"],
            "p99_ms": pct["p99_ms"],
            "errors": dict(errors),
        }

    def summary(self) -> dict[str, object]:
        ok = [s.latency_ms for s in self.samples if s.code == "OK"]
        by_kind: dict[str, dict[str, float]] = {}
        for kind in sorted({s.kind for s in self.samples}):
            lat = [s.latency_ms for s in self.samples if s.kind == kind and s.code == "OK"]
            by_kind[kind] = {"calls": sum(1 for s in self.samples if s.kind == kind), **percentiles(lat)}
        pct = percentiles(ok)
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 2),
            "calls": len(self.samples),
            "throughput_qps": round(len(self.samples) / self.seconds, 2) if self.seconds else 0.0,
            **pct,
            "p99_over_p50": round(pct["p99_ms"] / pct["p50_ms"], 2) if pct["p50_ms"] else 0.0,
            "errors": self.figures()["errors"],
            "degraded_legs": sum(s.degraded for s in self.samples),
            "by_kind": by_kind,
        }


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank q-quantile (0 < q < 1) of a non-empty list: the value at int(q * n) when sorted."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    at = {
        name: round(percentile(values, q), 2)
        for name, q in (("p50_ms", 0.5), ("p95_ms", 0.95), ("p99_ms", 0.99))
    }
    return {**at, "max_ms": round(max(values), 2)}


def queries_from_identifiers(idents: list[str], literals: list[str]) -> list[Query]:
    """Every intent, in roughly the proportions an agent or a person asks them."""
    out: list[Query] = []
    for name in idents:
        short = name.rsplit(".", 1)[-1]
        out += [
            Query("definition", short),
            Query("definition", f"where is {short} defined"),
            Query("callers", f"who calls {short}"),
            Query("understand", f"how does {short} work"),
            Query("impact", f"what breaks if I change {short}"),
            Query("regex", rf"def {re.escape(short)}\s*\(", search_pb2.SEARCH_MODE_REGEX),
            Query("keyword", f"{short} error handling", search_pb2.SEARCH_MODE_KEYWORD),
        ]
    out += [Query("literal", f'"{lit}"') for lit in literals]
    return out


class NoQueries(ValueError):
    """The repository offered nothing to sample queries from (an expected state: say so, no traceback)."""


def sample_queries(address: str, settings: Settings, repository: str, count: int, seed: int) -> list[Query]:
    """Identifiers and string literals of the indexed repository, found through Search itself."""
    stub = search_pb2_grpc.SearchServiceStub(sync_channel(address, settings, CHANNEL_OPTIONS))
    idents: set[str] = set()
    literals: set[str] = set()
    for word in SEED_WORDS:
        resp = stub.Search(
            search_pb2.SearchRequest(
                query=word,
                repositories=[repository] if repository else [],
                mode=search_pb2.SEARCH_MODE_KEYWORD,
                limit=SAMPLE_SEARCH_LIMIT,
                no_cache=True,
            ),
            timeout=30,
        )
        for hit in resp.hits:
            name = hit.symbol.rsplit(".", 1)[-1]
            if len(name) >= MIN_IDENT_CHARS and not name.startswith("__"):
                idents.add(name)
            literals.update(LITERAL_RE.findall(hit.snippet))
    if not idents:
        raise NoQueries(f"found no identifiers in {repository or 'any repository'}; is it indexed?")
    rng = random.Random(seed)
    ident_list = rng.sample(sorted(idents), min(len(idents), max(1, count // 7)))
    literal_list = rng.sample(sorted(literals), min(len(literals), max(1, count // 7)))
    return queries_from_identifiers(ident_list, literal_list)


def read_query_file(path: Path) -> list[Query]:
    """One query a line; 'regex<TAB>pattern' or 'literal<TAB>text' forces a mode; '#' starts a comment."""
    modes = {"regex": search_pb2.SEARCH_MODE_REGEX, "literal": search_pb2.SEARCH_MODE_LITERAL}
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, _, text = line.partition("\t")
        if text and kind in modes:
            out.append(Query(kind, text, modes[kind]))
        else:
            out.append(Query("file", line))
    return out


async def _client(
    stub: search_pb2_grpc.SearchServiceStub,
    queries: list[Query],
    repository: str,
    rng: random.Random,
    start_at: float,
    stop_at: float,
    budget: list[int],
    deadline_s: float,
    use_cache: bool,
    out: list[Sample],
    stop: asyncio.Event,
) -> None:
    while time.monotonic() < stop_at and budget[0] > 0 and not stop.is_set():
        q = rng.choice(queries)
        request = search_pb2.SearchRequest(
            query=q.text, mode=q.mode, repositories=[repository] if repository else [], no_cache=not use_cache
        )
        t = time.perf_counter()
        degraded = 0
        try:
            resp = await stub.Search(request, timeout=deadline_s)
            code = "OK"
            degraded = sum(1 for leg in resp.legs if leg.status == common_pb2.LEG_STATUS_DEGRADED)
        except grpc.aio.AioRpcError as e:
            code = e.code().name
        latency = (time.perf_counter() - t) * 1000
        if time.monotonic() >= start_at:  # after the warm-up
            budget[0] -= 1
            out.append(Sample(q.kind, latency, code, degraded))


async def run_load(
    address: str,
    settings: Settings,
    queries: list[Query],
    *,
    clients: int = DEFAULT_CLIENTS,
    seconds: float = DEFAULT_SECONDS,
    max_calls: int = 0,
    repository: str = "",
    deadline_s: float = DEFAULT_DEADLINE_S,
    warmup_s: float = WARMUP_S,
    use_cache: bool = False,
    seed: int = 0,
    stop: asyncio.Event | None = None,
) -> LoadResult:
    """`clients` concurrent callers on one channel (HTTP/2 multiplexes them, as a real client pool would);
    they end at `seconds`, after `max_calls`, or when `stop` is set, whichever comes first."""
    stop = stop or asyncio.Event()
    channel = aio_channel(address, settings, CHANNEL_OPTIONS, as_server=False)
    try:
        stub = search_pb2_grpc.SearchServiceStub(channel)
        start_at = time.monotonic() + warmup_s
        stop_at = start_at + seconds
        budget = [max_calls if max_calls > 0 else 1 << 62]
        samples: list[Sample] = []
        began = time.monotonic()
        await asyncio.gather(
            *(
                _client(
                    stub,
                    queries,
                    repository,
                    random.Random(seed * 1000 + i),
                    start_at,
                    stop_at,
                    budget,
                    deadline_s,
                    use_cache,
                    samples,
                    stop,
                )
                for i in range(clients)
            )
        )
        measured = max(0.0, time.monotonic() - max(start_at, began))
        return LoadResult(clients, measured, samples)
    finally:
        await channel.close(grace=None)


def format_summary(s: dict[str, Any]) -> str:
    lines = [
        f"clients {s['clients']}, {s['seconds']} s, {s['calls']} calls, {s['throughput_qps']} queries/s",
        f"latency ms: p50 {s['p50_ms']}  p95 {s['p95_ms']}  p99 {s['p99_ms']}  max {s['max_ms']}  "
        f"(p99/p50 {s['p99_over_p50']})",
        f"errors: {json.dumps(s['errors']) if s['errors'] else 'none'}; degraded leg reports: {s['degraded_legs']}",
        f"{'kind':<12}{'calls':>7}{'p50':>9}{'p95':>9}{'p99':>9}",
    ]
    for kind, k in s["by_kind"].items():
        lines.append(f"{kind:<12}{int(k['calls']):>7}{k['p50_ms']:>9}{k['p95_ms']:>9}{k['p99_ms']:>9}")
    return "\n".join(lines)
