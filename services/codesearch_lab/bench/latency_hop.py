"""What one leg call's gRPC hop costs in the one-process server: KeywordSearch through a channel to the server's
own address, from the server's event loop (as the orchestrator called its legs), and through the in-process
`LocalChannel` (as it calls them now: common/local_rpc.py), against the same servicer method called directly on
the same data, in the same run.

    python -m codesearch_lab.bench.latency_hop --corpus /tmp/corpus/cpython-lib [--queries dev-queries.jsonl]

The corpus is indexed (keyword leg only) into a temporary data directory first. Prints p50 wall time and the
process's CPU time per call for each way, their ratios to the direct call, and whether every answer was the same
bytes every way.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
from codesearch.common.local_rpc import LocalChannel, LocalServices, local_services
from codesearch.config import Settings
from codesearch.eval.runfile import load_queries
from codesearch.keyword.service import KeywordServicer
from codesearch.orchestrator.legs import CHANNEL_OPTIONS
from codesearch.orchestrator.plan import LEG_DEPTH
from codesearch.server import registrars
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

SERVICES = ("keyword", "orchestrator")  # the orchestrator only indexes; the calls go to the keyword leg
REPOSITORY = "corpus"
CALL_TIMEOUT_S = 30.0  # far above any call; a hung server fails the run instead of stalling it
WARMUP_CALLS = 10  # per way: the first calls open the searcher
DEFAULT_QUERIES = (
    "how are retries spaced out",
    "parse the configuration file",
    "open a socket with a timeout",
)


@dataclass
class Way:
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)


async def _measure(
    address: str, served: LocalServices, settings: Settings, queries: list[str], rounds: int
) -> dict[str, Way]:
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    stub = keyword_pb2_grpc.KeywordServiceStub(channel)
    local = keyword_pb2_grpc.KeywordServiceStub(LocalChannel(served, channel, []))
    servicer = KeywordServicer(settings)
    requests = [
        keyword_pb2.KeywordSearchRequest(repositories=[REPOSITORY], query=q, limit=LEG_DEPTH) for q in queries
    ]

    async def through_grpc(r: keyword_pb2.KeywordSearchRequest) -> keyword_pb2.KeywordSearchResponse:
        return await stub.KeywordSearch(r, timeout=CALL_TIMEOUT_S)

    async def in_process(r: keyword_pb2.KeywordSearchRequest) -> keyword_pb2.KeywordSearchResponse:
        return await local.KeywordSearch(r, timeout=CALL_TIMEOUT_S)

    async def direct(r: keyword_pb2.KeywordSearchRequest) -> keyword_pb2.KeywordSearchResponse:
        return await servicer.KeywordSearch(r, None)  # type: ignore[arg-type]  # no context: it never fails here

    ways = {
        "through gRPC": (through_grpc, Way()),
        "LocalChannel": (in_process, Way()),
        "direct": (direct, Way()),
    }
    for r in (requests * WARMUP_CALLS)[:WARMUP_CALLS]:
        for call, _way in ways.values():
            await call(r)
    names = list(ways)
    for n in range(rounds):
        for i, r in enumerate(requests):
            shift = (i + n) % len(names)  # each way goes first as often as the others
            for name in names[shift:] + names[:shift]:
                call, way = ways[name]
                wall, cpu = time.perf_counter(), time.process_time()
                resp = await call(r)
                way.wall_ms.append((time.perf_counter() - wall) * 1000)
                way.cpu_ms.append((time.process_time() - cpu) * 1000)
                if n == 0:
                    way.answers.append(resp.SerializeToString(deterministic=True))
    await channel.close(grace=None)
    return {name: way for name, (_call, way) in ways.items()}


def report(ways: dict[str, Way]) -> str:
    direct = ways["direct"]
    lines = [
        f"KeywordSearch, {len(direct.wall_ms)} calls each way, limit {LEG_DEPTH}, from the server's event loop",
        f"{'way':<14}{'wall p50 ms':>12}{'ratio':>7}{'extra':>7}{'CPU p50 ms':>12}{'ratio':>7}{'extra':>7}",
    ]
    base_wall, base_cpu = statistics.median(direct.wall_ms), statistics.median(direct.cpu_ms)
    for name, way in ways.items():
        wall, cpu = statistics.median(way.wall_ms), statistics.median(way.cpu_ms)
        lines.append(
            f"{name:<14}{wall:>12.2f}{wall / base_wall:>7.2f}{wall - base_wall:>7.2f}"
            f"{cpu:>12.2f}{cpu / max(base_cpu, 1e-9):>7.2f}{cpu - base_cpu:>7.2f}"
        )
    same = sum(len({w.answers[i] for w in ways.values()}) == 1 for i in range(len(direct.answers)))
    lines.append(f"same answer bytes every way: {same} of {len(direct.answers)}")
    return "\n".join(lines)


def run(home: Path, corpus: Path, queries: list[str], rounds: int) -> str:
    settings = Settings.from_env({"CODESEARCH_HOME": str(home)})
    server = ThreadedServer(registrars(settings, SERVICES)).start()
    try:
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(corpus), name=REPOSITORY)))
        assert server.grpc_server is not None
        served = local_services(server.grpc_server)
        assert served is not None  # ThreadedServer records what it hosts
        ways: dict[str, Way] = server.run(_measure(server.address, served, settings, queries, rounds))
    finally:
        server.stop()
    return report(ways)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True, help="directory to index")
    p.add_argument("--queries", type=Path, help="query set (JSONL); its concept queries are asked")
    p.add_argument("--rounds", type=int, default=3, help="times through the queries")
    args = p.parse_args(argv)
    queries = list(DEFAULT_QUERIES)
    if args.queries:
        queries = [q.query for q in load_queries(args.queries) if q.klass == "concept"] or queries
    with tempfile.TemporaryDirectory(prefix="codesearch-hop-") as tmp:
        print(run(Path(tmp), args.corpus, queries, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
