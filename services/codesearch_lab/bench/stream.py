"""StreamSearch on a large result set: time to the first results and to the totals, and the match budget held,
against the unary literal Search (limit 200) in the same run.

    python -m codesearch_lab.bench.stream --corpus /tmp/corpus/cpython-lib [--repeat 5]

A real server in this process (keyword and orchestrator services: the stream reads only the trigram index);
the corpus is indexed into a temporary data directory first.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

from codesearch_lab.bench.local import local_server

SERVICES = ("keyword", "orchestrator")
# (query, mode): "or" is on ~51,000 lines of the standard library (rg -i -F -c) and has no trigram (a scan of
# every file); "self" (~43,000 lines) goes through the trigram index; the regex has many matches too.
QUERIES = (
    ("or", search_pb2.SEARCH_MODE_LITERAL),
    ("self", search_pb2.SEARCH_MODE_LITERAL),
    (r"def \w+\(self", search_pb2.SEARCH_MODE_REGEX),
)
BUDGETS = (1_000, 10_000, 1_000_000)  # matching lines: small, the default, and "everything"


def _stream(
    stub: search_pb2_grpc.SearchServiceStub, query: str, mode: search_pb2.SearchMode, budget: int
) -> dict:
    started = time.monotonic()
    first = 0.0
    lines = 0
    done = search_pb2.StreamSearchDone()
    request = search_pb2.StreamSearchRequest(
        query=query, mode=mode, budget=search_pb2.SearchBudget(max_matches=budget)
    )
    for message in stub.StreamSearch(request):
        if message.WhichOneof("event") == "files":
            if not first:
                first = time.monotonic() - started
            lines += sum(len(f.lines) for f in message.files.files)
        else:
            done = message.done
    return {
        "first_ms": first * 1000,
        "total_ms": (time.monotonic() - started) * 1000,
        "lines": lines,
        "stop": common_pb2.StopReason.Name(done.stop_reason).removeprefix("STOP_REASON_"),
        "loaded": done.legs[0].files_loaded if done.legs else 0,
    }


def _unary_ms(stub: search_pb2_grpc.SearchServiceStub, query: str, mode: search_pb2.SearchMode) -> float:
    started = time.monotonic()
    stub.Search(search_pb2.SearchRequest(query=query, mode=mode, limit=200, no_cache=True))
    return (time.monotonic() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="directory to index")
    parser.add_argument("--repeat", type=int, default=5, help="runs per query and budget (p50 reported)")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="codesearch-stream-") as tmp,
        local_server(Path(tmp), SERVICES) as stub,
    ):
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(args.corpus), name="corpus")))
        _report(stub, args.repeat)
    return 0


def _report(stub: search_pb2_grpc.SearchServiceStub, repeat: int) -> None:
    print(
        f"{'query':<16} {'budget':>9} {'first p50':>10} {'first max':>10} {'total p50':>10} {'lines':>8} "
        f"{'files read':>10} {'stopped':>12} {'unary p50':>10} {'first/unary':>11}"
    )
    for query, mode in QUERIES:
        unary = statistics.median(_unary_ms(stub, query, mode) for _ in range(repeat))
        for budget in BUDGETS:
            runs = [_stream(stub, query, mode, budget) for _ in range(repeat)]
            first = statistics.median(r["first_ms"] for r in runs)
            over = [r["lines"] for r in runs if r["lines"] > budget]
            assert not over, f"budget {budget} exceeded: {over}"
            last = runs[-1]
            print(
                f"{query:<16} {budget:>9} {first:>8.1f}ms {max(r['first_ms'] for r in runs):>8.1f}ms "
                f"{statistics.median(r['total_ms'] for r in runs):>8.0f}ms {last['lines']:>8} {last['loaded']:>10} "
                f"{last['stop']:>12} {unary:>8.1f}ms {first / unary:>11.2f}"
            )


if __name__ == "__main__":
    raise SystemExit(main())
