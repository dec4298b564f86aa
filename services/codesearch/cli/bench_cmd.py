"""`codesearch bench load|soak|scale ...` (and room for other benchmarks as further subcommands)."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from codesearch.cli.client import CliError
from codesearch.config import Settings

if TYPE_CHECKING:
    from codesearch.bench.load import Query


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from codesearch.bench import load

    sub = parser.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    p = sub.add_parser("load", help="concurrent clients with a realistic query mix against a running server")
    # Also accepted after the benchmark's name; SUPPRESS keeps the value given before it.
    p.add_argument("--address", default=argparse.SUPPRESS, help="server address HOST:PORT")
    p.add_argument("--clients", type=int, default=load.DEFAULT_CLIENTS, help="concurrent clients")
    p.add_argument("--seconds", type=float, default=load.DEFAULT_SECONDS, help="measured duration")
    p.add_argument("--max-calls", type=int, default=0, help="stop after this many calls (0: no limit)")
    p.add_argument("--repository", default="", help="repository to query (default: the first indexed)")
    p.add_argument("--queries", type=Path, help="query file, one a line (default: sampled from the index)")
    p.add_argument("--sample", type=int, default=200, help="queries to sample from the index")
    p.add_argument("--deadline", type=float, default=load.DEFAULT_DEADLINE_S, help="per-call deadline, s")
    p.add_argument("--warmup", type=float, default=load.WARMUP_S, help="unmeasured warm-up, s")
    p.add_argument("--use-cache", action="store_true", help="let the server's query cache answer repeats")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the summary here as JSON")
    _add_soak_arguments(sub)
    _add_scale_arguments(sub)


def _add_soak_arguments(sub: argparse._SubParsersAction) -> None:
    from codesearch.bench import soak

    p = sub.add_parser("soak", help="fuzz and pathological queries beside well-behaved clients (bounded)")
    p.add_argument("--address", default=argparse.SUPPRESS, help="server address HOST:PORT")
    p.add_argument("--seconds", type=float, default=soak.DEFAULT_SECONDS, help="duration with the fuzz")
    p.add_argument(
        "--baseline-seconds",
        type=float,
        default=0.0,
        help="duration alone first (default: a quarter of --seconds)",
    )
    p.add_argument("--fuzz-queries", type=int, default=soak.DEFAULT_FUZZ_QUERIES, help="fuzz calls at most")
    p.add_argument(
        "--fuzz-clients", type=int, default=soak.DEFAULT_FUZZ_CLIENTS, help="concurrent fuzz calls"
    )
    p.add_argument("--clients", type=int, default=soak.DEFAULT_CLIENTS, help="well-behaved clients")
    p.add_argument("--repository", default="", help="repository to query (default: the first indexed)")
    p.add_argument("--sample", type=int, default=200, help="well-behaved queries to sample from the index")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the summary here as JSON")


def _add_scale_arguments(sub: argparse._SubParsersAction) -> None:
    from codesearch.bench import scale

    p = sub.add_parser(
        "scale", help="index 1x, 4x, 16x a corpus in its own server: time, disk, memory, latency"
    )
    p.add_argument(
        "--sizes", default=",".join(map(str, scale.DEFAULT_SIZES)), help="copies per row, e.g. 1,2"
    )
    p.add_argument("--corpus", type=Path, required=True, help="directory copied into each repository")
    p.add_argument(
        "--queries",
        type=Path,
        required=True,
        help="query set (JSONL with klass and query, e.g. the standard-library set dev-queries.jsonl)",
    )
    p.add_argument(
        "--per-intent", type=int, default=scale.DEFAULT_PER_INTENT, help="queries per intent (0: all)"
    )
    p.add_argument("--tiers", default=scale.DEFAULT_TIERS, help="CODESEARCH_VECTOR_TIERS for the server")
    p.add_argument(
        "--max-rss-gib", type=float, default=scale.DEFAULT_MAX_RSS_GIB, help="stop the server past this"
    )
    p.add_argument("--work-dir", type=Path, help="copies and data directories (default: a temporary folder)")
    p.add_argument("--json", type=Path, help="also write the rows here as JSON")


def run(args: argparse.Namespace) -> int:
    if args.bench == "load":
        return _run_load(args)
    if args.bench == "soak":
        return _run_soak(args)
    if args.bench == "scale":
        return _run_scale(args)
    raise CliError(f"unknown benchmark {args.bench}")


def _sampled(args: argparse.Namespace, settings: Settings, repository: str) -> list[Query]:
    """Queries sampled from the repository, or a plain error saying what to do instead."""
    from codesearch.bench import load
    from codesearch.cli.client import call

    try:
        return call(
            args.address,
            lambda: load.sample_queries(args.address, settings, repository, args.sample, args.seed),
        )
    except load.NoQueries as e:
        raise CliError(f"{e} Name another with --repository NAME, or give --queries FILE.") from None


def _first_repository(address: str, settings: Settings) -> str:
    from codesearch.cli.client import call, channel
    from codesearch.v1 import search_pb2, search_pb2_grpc

    stub = search_pb2_grpc.SearchServiceStub(channel(address, settings))
    repos = call(address, lambda: stub.ListRepositories(search_pb2.ListRepositoriesRequest(), timeout=10))
    if not repos.repositories:
        raise CliError("no repository is indexed; run `codesearch index DIR` first")
    return str(repos.repositories[0].name)


def _run_soak(args: argparse.Namespace) -> int:
    from codesearch.bench import soak

    settings = Settings.from_env()
    repository = args.repository or _first_repository(args.address, settings)
    queries = _sampled(args, settings, repository)
    print(
        f"{len(queries)} well-behaved queries over {repository!r}, {args.clients} clients; then beside "
        f"{args.fuzz_clients} fuzz clients for {args.seconds} s or {args.fuzz_queries} fuzz calls",
        flush=True,
    )
    result = asyncio.run(
        soak.run_soak(
            args.address,
            settings,
            queries,
            repository=repository,
            seconds=args.seconds,
            clients=args.clients,
            fuzz_clients=args.fuzz_clients,
            fuzz_queries=args.fuzz_queries,
            seed=args.seed,
            baseline_seconds=args.baseline_seconds,
        )
    )
    summary = result.summary()
    print(soak.format_summary(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    bad = {"INTERNAL", "UNKNOWN"} & set(summary["fuzz_statuses"])
    # An overrun that ended while this client's own loop was stalled was late here, not in the server.
    return 1 if bad or summary["overruns_not_explained"] else 0


def _run_load(args: argparse.Namespace) -> int:
    from codesearch.bench import load

    settings = Settings.from_env()
    repository = args.repository or _first_repository(args.address, settings)
    queries = load.read_query_file(args.queries) if args.queries else _sampled(args, settings, repository)
    print(
        f"{len(queries)} queries over {repository!r}; {args.clients} clients for {args.seconds} s", flush=True
    )
    result = asyncio.run(
        load.run_load(
            args.address,
            settings,
            queries,
            clients=args.clients,
            seconds=args.seconds,
            max_calls=args.max_calls,
            repository=repository,
            deadline_s=args.deadline,
            warmup_s=args.warmup,
            use_cache=args.use_cache,
            seed=args.seed,
        )
    )
    summary = result.summary()
    print(load.format_summary(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0 if not summary["errors"] else 1


def _run_scale(args: argparse.Namespace) -> int:
    import signal
    import sys
    import tempfile

    from codesearch.bench import scale

    # `timeout` ends a run with SIGTERM: exit through the `finally`s, which stop the server it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sizes = scale.parse_sizes(args.sizes)
        queries = scale.read_queries(args.queries, args.per_intent)
        with tempfile.TemporaryDirectory(prefix="codesearch-scale-") as tmp:
            work = args.work_dir or Path(tmp)
            results = scale.run_scale(sizes, args.corpus, queries, work, args.tiers, args.max_rss_gib)
    except scale.ScaleError as e:
        raise CliError(str(e)) from None
    print(scale.format_report(results, args.corpus, args.tiers))
    if args.json:
        args.json.write_text(scale.results_json(results))
    return 0 if not any(r.errors for r in results) else 1
