"""`codesearch index PATH [--name NAME] [--full] [--ref REF] [--watch] [--serve-watch]`: index a directory (or a
git ref of it) through the server, with a progress bar; --watch keeps it fresh from this process."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path

from codesearch.cli.client import CliError, call, channel
from codesearch.v1 import search_pb2, search_pb2_grpc

BAR_WIDTH = 30


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="directory to index")
    parser.add_argument("--name", default="", help="repository name (default: the directory's name)")
    parser.add_argument("--full", action="store_true", help="re-index every file, ignoring content hashes")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument(
        "--verbose", action="store_true", help="list every skipped file and warning, not only their counts"
    )
    parser.add_argument(
        "--ref",
        default="",
        help="index this branch, tag or commit from the git objects, without a checkout (name: DIR@REF)",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="keep watching the directory and re-index what changes (one run per burst) until Ctrl-C",
    )
    parser.add_argument(
        "--serve-watch",
        action="store_true",
        help="ask the server to watch the directory itself (until the repository is deleted)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="leave out paths matching this .gitignore pattern (repeatable)",
    )
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="run the indexer in this process and send to the legs named by CODESEARCH_SHARDS or "
        "CODESEARCH_*_ADDR (an indexing job beside the source), instead of asking a server to read the path",
    )


def _bar(p: search_pb2.IndexRepositoryResponse) -> str:
    phase = search_pb2.IndexPhase.Name(p.phase).removeprefix("INDEX_PHASE_").lower()
    total = max(p.files_total, 1)
    filled = int(BAR_WIDTH * p.files_done / total)
    return (
        f"\r{phase:<10} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {p.files_done}/{p.files_total} files, "
        f"{p.chunks} chunks, {p.elapsed_seconds:.1f}s"
    )


async def _embedded(
    request: search_pb2.IndexRepositoryRequest, tty: bool
) -> search_pb2.IndexRepositoryResponse:
    from codesearch.common.errors import ServiceError
    from codesearch.config import Settings
    from codesearch.orchestrator.indexer import Indexer
    from codesearch.orchestrator.legs import LegClients
    from codesearch.orchestrator.registry import Registry

    settings = Settings.from_env()
    legs = LegClients(settings, local=set())
    indexer = Indexer(settings, legs, Registry(settings.service_dir("orchestrator")))
    last = search_pb2.IndexRepositoryResponse()
    try:
        async for progress in indexer.run(request):
            last = progress
            if tty:
                print(_bar(progress), end="", file=sys.stderr, flush=True)
    except ServiceError as e:
        raise CliError(e.message) from None
    finally:
        await legs.close()
    if tty:
        print(file=sys.stderr)
    return last


def run(args: argparse.Namespace) -> int:
    # The server reads the directory: send an absolute path so the server's working directory does not matter.
    path = str(Path(args.path).expanduser().absolute())
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    request = search_pb2.IndexRepositoryRequest(
        path=path,
        name=args.name,
        force_full=args.full,
        exclude=args.exclude,
        ref=args.ref,
        watch=args.serve_watch,
    )
    tty = sys.stderr.isatty() and not args.quiet
    if args.watch:
        if args.ref or args.embedded:
            raise CliError(
                "--watch is for a directory indexed through a server (not with --ref or --embedded)"
            )
        return asyncio.run(_watch(args.address, stub, request))

    def stream() -> search_pb2.IndexRepositoryResponse:
        last = search_pb2.IndexRepositoryResponse()
        for progress in stub.IndexRepository(request):
            last = progress
            if tty:
                print(_bar(progress), end="", file=sys.stderr, flush=True)
        if tty:
            print(file=sys.stderr)
        return last

    done = asyncio.run(_embedded(request, tty)) if args.embedded else call(args.address, stream)
    _summary(done, args.verbose)
    return 0


SKIPPED_MARK = ": skipped, "  # the indexer's warning for a file it left out: "<path>: skipped, <reason>"
WARNINGS_SHOWN = 10  # other warnings printed without --verbose


def warning_lines(warnings: list[str], verbose: bool, skipped: dict[str, int] | None = None) -> list[str]:
    """Skipped files as one line of counts per reason (every one with --verbose); other warnings, at most
    WARNINGS_SHOWN of them unless verbose. `skipped`: the server's exact counts per reason (the warnings list at
    most 50 files); without them (an older server) the warnings are counted."""
    counted: dict[str, int] = {}
    other = []
    for w in warnings:
        path, mark, reason = w.partition(SKIPPED_MARK)
        if mark and not verbose:
            counted[reason] = counted.get(reason, 0) + 1
        else:
            other.append(w)
    reasons = dict(skipped) if skipped and not verbose else counted
    lines = []
    if reasons:
        counts = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
        lines.append(f"  skipped {sum(reasons.values())} files: {counts} (--verbose lists them)")
    shown = other if verbose else other[:WARNINGS_SHOWN]
    lines += [f"  warning: {w}" for w in shown]
    unlisted = sum((skipped or {}).values()) - sum(1 for w in warnings if SKIPPED_MARK in w)
    if verbose and unlisted > 0:
        lines.append(f"  ... and {unlisted} more skipped files (the server lists the first warnings only)")
    if len(shown) < len(other):
        lines.append(f"  ... and {len(other) - len(shown)} more warnings (--verbose lists them)")
    return lines


def _summary(done: search_pb2.IndexRepositoryResponse, verbose: bool = False) -> None:
    at = f" at {done.ref} ({done.commit[:12]})" if done.commit else ""
    delta = f", delta from {done.delta_from_commit[:12]}" if done.delta_from_commit else ""
    print(
        f"indexed {done.repository}{at}: {done.files_total} files ({done.files_changed} changed, "
        f"{done.files_unchanged} unchanged, {done.files_deleted} deleted, {done.files_skipped} skipped; "
        f"{done.files_read} read{delta}), {done.chunks} chunks in {done.elapsed_seconds:.1f}s, "
        f"version {done.index_version}",
        flush=True,
    )
    for line in warning_lines(list(done.warnings), verbose, dict(done.skipped_reasons)):
        print(line)
    for leg in done.degraded_legs:
        print(f"  degraded: {leg}")


async def _watch(
    address: str, stub: search_pb2_grpc.SearchServiceStub, request: search_pb2.IndexRepositoryRequest
) -> int:
    """Watches from this process; each batch of changes is one IndexRepository call naming the changed paths."""
    from codesearch.orchestrator.watcher import TreeWatcher

    def index(paths: set[str]) -> None:
        one = search_pb2.IndexRepositoryRequest()
        one.CopyFrom(request)
        one.changed_paths.extend(sorted(paths))
        started = time.monotonic()
        last = search_pb2.IndexRepositoryResponse()
        for progress in stub.IndexRepository(one):
            last = progress
        _summary(last, verbose=False)
        print(
            f"  {len(paths) or 'all'} paths changed, searchable {time.monotonic() - started:.2f}s after the batch",
            flush=True,
        )

    async def reindex(paths: set[str]) -> None:
        await asyncio.to_thread(call, address, lambda: index(paths))

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"watching {request.path} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    await TreeWatcher(Path(request.path), reindex).run(stop)
    return 0
