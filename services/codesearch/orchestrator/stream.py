"""StreamSearch: a literal or regex search streamed from the keyword leg's trigram index as results are ready.

The orchestrator resolves the repository and ref filters against its registry, opens one StreamGrep call per
keyword shard (a process holding repositories), relays each batch of file matches with the commit and ref of
its repository, and ends with one message of totals: per-leg statistics, and why the search stopped. Budgets
travel to the leg, which stops between batches; the call's deadline travels with the call.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc

from codesearch.common.errors import ServiceError, check_limit, check_query, failed_precondition, invalid
from codesearch.config import (
    MAX_QUERY_CHARS,
    STREAM_DEFAULT_MAX_MATCHES,
    STREAM_MAX_MATCHES,
    STREAM_MAX_WALL_MS,
)
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.refs import select
from codesearch.orchestrator.registry import Registry, RepoRecord
from codesearch.v1 import common_pb2, keyword_pb2, search_pb2

SYNTAX_OF_MODE = {
    search_pb2.SEARCH_MODE_UNSPECIFIED: keyword_pb2.PATTERN_SYNTAX_LITERAL,
    search_pb2.SEARCH_MODE_LITERAL: keyword_pb2.PATTERN_SYNTAX_LITERAL,
    search_pb2.SEARCH_MODE_REGEX: keyword_pb2.PATTERN_SYNTAX_REGEX,
}
# A leg's refusal the client should see as it is (a bad regex, an unknown repository, a budget out of range).
PASSED_THROUGH = frozenset(
    {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.DEADLINE_EXCEEDED}
)


async def stream_search(
    legs: LegClients,
    registry: Registry,
    request: search_pb2.StreamSearchRequest,
    time_remaining: float | None,
) -> AsyncIterator[search_pb2.StreamSearchResponse]:
    started = time.monotonic()
    check_query(request.query, MAX_QUERY_CHARS)
    if request.mode not in SYNTAX_OF_MODE:
        raise invalid(
            "StreamSearch: mode takes SEARCH_MODE_LITERAL or SEARCH_MODE_REGEX, not "
            + _enum_name(search_pb2.SearchMode, request.mode)
        )
    keyword = legs.keyword
    if keyword is None:
        raise failed_precondition(
            "the keyword service is not configured; StreamSearch needs its trigram index"
        )
    max_matches = check_limit(
        request.budget.max_matches, STREAM_DEFAULT_MAX_MATCHES, STREAM_MAX_MATCHES, "budget.max_matches"
    )
    max_wall_ms = check_limit(request.budget.max_wall_ms, 0, STREAM_MAX_WALL_MS, "budget.max_wall_ms")
    records = registry.load()
    names = (
        select(records, request.repositories, request.refs) if request.repositories or request.refs else []
    )
    leg_request = keyword_pb2.StreamGrepRequest(
        repositories=names,
        pattern=request.query,
        syntax=SYNTAX_OF_MODE[request.mode],
        case_sensitive=request.case_sensitive,
        languages=list(request.languages),
        path_glob=request.path_glob,
        max_matches=max_matches,
        max_wall_ms=max_wall_ms,
        explain=request.explain,
    )
    done = search_pb2.StreamSearchDone(stop_reason=common_pb2.STOP_REASON_COMPLETED)
    for shard, shard_request in _per_shard(keyword, leg_request):
        try:
            async for message in shard.StreamGrep(shard_request, timeout=time_remaining):
                if message.files:
                    _stamp(records, message.files)
                    done.files_matched += len(message.files)
                    done.lines_matched += sum(len(f.lines) for f in message.files)
                    yield search_pb2.StreamSearchResponse(files=search_pb2.FileMatches(files=message.files))
                if message.stop_reason:
                    done.legs.append(message.stats)
                    if message.stop_reason != common_pb2.STOP_REASON_COMPLETED:
                        done.stop_reason = message.stop_reason
        except grpc.aio.AioRpcError as e:
            if e.code() in PASSED_THROUGH or not done.lines_matched:
                code = e.code() if e.code() in PASSED_THROUGH else grpc.StatusCode.UNAVAILABLE
                raise ServiceError(code, f"keyword leg: {e.details()}") from None
            done.legs.append(common_pb2.LegSearchStats(leg=common_pb2.LEG_TRIGRAM, error=e.details() or ""))
            done.stop_reason = common_pb2.STOP_REASON_LEG_FAILED
        if done.stop_reason != common_pb2.STOP_REASON_COMPLETED:
            break
        # The next shard gets what is left of the budgets.
        leg_request.max_matches = max_matches - int(done.lines_matched)
        if max_wall_ms:
            left_ms = max_wall_ms - int((time.monotonic() - started) * 1000)
            if left_ms <= 0:
                done.stop_reason = common_pb2.STOP_REASON_MAX_WALL_TIME
                break
            leg_request.max_wall_ms = left_ms
    done.duration_ms = (time.monotonic() - started) * 1000
    yield search_pb2.StreamSearchResponse(done=done)


def _per_shard(
    keyword: Any, request: keyword_pb2.StreamGrepRequest
) -> Iterator[tuple[Any, keyword_pb2.StreamGrepRequest]]:
    """One keyword process, or each shard with the repositories it holds (all of its own when none named).
    Each shard's request is copied when its turn comes, with the budgets then left."""
    shard_stubs = getattr(keyword, "stubs", None)  # orchestrator/sharding.py's ShardedStub
    if shard_stubs is None:
        yield keyword, request
        return
    for i, stub in enumerate(shard_stubs):
        names = [n for n in request.repositories if keyword.shard_of(n) == i]
        if request.repositories and not names:
            continue
        one = keyword_pb2.StreamGrepRequest()
        one.CopyFrom(request)
        del one.repositories[:]
        one.repositories.extend(names)
        yield stub, one


def _stamp(records: dict[str, RepoRecord], files: list[common_pb2.FileMatch]) -> None:
    for f in files:
        record = records.get(f.repository)
        if record is not None:
            f.commit, f.ref = record.commit, record.ref


def _enum_name(enum: Any, number: int) -> str:
    """An enum value's name, or its number when the client sent one the API does not define (proto3 enums are
    open: 99 or -7 arrive as they are)."""
    return str(enum.Name(number)) if number in enum.values() else str(number)
