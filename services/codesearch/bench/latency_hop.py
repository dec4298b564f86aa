"""What one leg call's gRPC hop costs in the one-process server: KeywordSearch through a channel to the server's
own address, from the server's event loop (as the orchestrator calls its legs), against the same servicer method
called directly on the same data, in the same run.

    python -m codesearch.bench.latency_hop --corpus /tmp/corpus/cpython-lib [--queries dev-queries.jsonl]

The corpus is indexed (keyword leg only) into a temporary data directory first. Prints p50 wall time and the
process's CPU time per call for both, their ratios, and whether every answer was the same bytes both ways.
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


async def _measure(address: str, settings: Settings, queries: list[str], rounds: int) -> tuple[Way, Way]:
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    stub = keyword_pb2_grpc.KeywordServiceStub(channel)
    servicer = KeywordServicer(settings)
    requests = [
        keyword_pb2.KeywordSearchRequest(repositories=[REPOSITORY], query=q, limit=LEG_DEPTH) for q in queries
    ]

    async def through_grpc(r: keyword_pb2.KeywordSearchRequest) -> keyword_pb2.KeywordSearchResponse:
        return await stub.KeywordSearch(r, timeout=CALL_TIMEOUT_S)

    async def direct(r: keyword_pb2.KeywordSearchRequest) -> keyword_pb2.KeywordSearchResponse:
        return await servicer.KeywordSearch(r, None)  # type: ignore[arg-type]  # no context: it never fails here

    ways = {"grpc": (through_grpc, Way()), "direct": (direct, Way())}
    for r in (requests * WARMUP_CALLS)[:WARMUP_CALLS]:
        await through_grpc(r)
        await direct(r)
    for n in range(rounds):
        for i, r in enumerate(requests):
            order = ("grpc", "direct") if (i + n) % 2 == 0 else ("direct", "grpc")
            for name in order:
                call, way = ways[name]
                wall, cpu = time.perf_counter(), time.process_time()
                resp = await call(r)
                way.wall_ms.append((time.perf_counter() - wall) * 1000)
                way.cpu_ms.append((time.process_time() - cpu) * 1000)
                if n == 0:
                    way.answers.append(resp.SerializeToString(deterministic=True))
    await channel.close(grace=None)
    return ways["grpc"][1], ways["direct"][1]


def report(hop: Way, direct: Way) -> str:
    wall = statistics.median(hop.wall_ms), statistics.median(direct.wall_ms)
    cpu = statistics.median(hop.cpu_ms), statistics.median(direct.cpu_ms)
    same = sum(a == b for a, b in zip(hop.answers, direct.answers, strict=True))
    return "\n".join(
        [
            f"KeywordSearch, {len(hop.wall_ms)} calls each way, limit {LEG_DEPTH}, from the server's event loop",
            f"{'':<22}{'through gRPC':>14}{'direct':>10}{'ratio':>8}{'hop':>8}",
            f"{'wall p50 ms':<22}{wall[0]:>14.2f}{wall[1]:>10.2f}{wall[0] / wall[1]:>8.2f}{wall[0] - wall[1]:>8.2f}",
            f"{'process CPU p50 ms':<22}{cpu[0]:>14.2f}{cpu[1]:>10.2f}{cpu[0] / max(cpu[1], 1e-9):>8.2f}"
            f"{cpu[0] - cpu[1]:>8.2f}",
            f"same answer bytes both ways: {same} of {len(hop.answers)}",
        ]
    )


def run(home: Path, corpus: Path, queries: list[str], rounds: int) -> str:
    settings = Settings.from_env({"CODESEARCH_HOME": str(home)})
    server = ThreadedServer(registrars(settings, SERVICES)).start()
    try:
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(corpus), name=REPOSITORY)))
        ways: tuple[Way, Way] = server.run(_measure(server.address, settings, queries, rounds))  # type: ignore[assignment]
    finally:
        server.stop()
    return report(*ways)


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
