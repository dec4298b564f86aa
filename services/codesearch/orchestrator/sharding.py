"""Repositories spread over shards by rendezvous hashing; stubs that route each call to the right shards.

A shard is one address hosting the keyword, vector and graph legs for its repositories. A `ShardedStub` looks
like one leg's stub: a call naming repositories goes to the shards that hold them (all shards when it names
none) and their answers are merged; a call about one repository or location goes to its shard; an index update
stream goes to the shard its header names. The fused ranking stays global: the orchestrator fuses the merged
lists of every leg once.

Shards that fail while others answer come back with the merged answer from `ShardedStub.answer` (the fan-out's
call), so the response can name them as degraded instead of failing the whole leg.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import grpc

# A shard that failed while others answered: (shard address, reason).
ShardFailure = tuple[str, str]
MERGED_COUNTERS = ("candidate_files", "total_files", "embedded", "total")  # summed across shards
# True if any shard says so: a vector answer is upgrading (so not cached) when any shard's better tier fills in.
MERGED_FLAGS = ("full_scan", "partial", "upgrading")
MERGED_NAMES = (
    "tier",
    "model",
    "query_encoder",
    "rescored_by",
)  # the vector leg's tier, model, query encoder and re-scoring: each distinct shard's value, joined by "+"


def rendezvous_shard(repository: str, shards: list[str]) -> int:
    """Index of the shard that owns a repository: highest hash of (shard, repository).

    Adding a shard moves only the repositories the new shard wins (about 1/n of them); removing one moves only
    its own.
    """
    if not shards:
        raise ValueError("no shards")

    def weight(i: int) -> bytes:
        return hashlib.blake2b(f"{shards[i]}\x1f{repository}".encode(), digest_size=8).digest()

    return max(range(len(shards)), key=weight)


class ShardedStub:
    """Stands in for one leg's stub across shards (see the module docstring)."""

    def __init__(self, addresses: list[str], stubs: list[Any]) -> None:
        self.addresses = addresses
        self.stubs = stubs

    def shard_of(self, repository: str) -> int:
        return rendezvous_shard(repository, self.addresses)

    def __getattr__(self, method: str) -> Any:
        if method.startswith("Update"):
            return self._stream_router(method)
        return self._unary_router(method)

    def _stream_router(self, method: str) -> Any:
        async def call(requests: Iterable[Any], **kwargs: Any) -> Any:  # the indexer sends a finite iterator
            items = list(requests)
            header = items[0].update.header if items else None
            shard = self.shard_of(header.repository) if header is not None else 0
            return await getattr(self.stubs[shard], method)(iter(items), **kwargs)

        return call

    async def answer(self, method: str, request: Any, **kwargs: Any) -> tuple[Any, list[ShardFailure]]:
        """A unary call's merged answer and the shards that failed while others answered."""
        if "repositories" in {f.name for f in request.DESCRIPTOR.fields}:
            return await self._fan_out(method, request, kwargs)
        return await self._unary_router(method)(request, **kwargs), []

    def _unary_router(self, method: str) -> Any:
        async def call(request: Any, **kwargs: Any) -> Any:
            fields = {f.name for f in request.DESCRIPTOR.fields}
            if "repositories" in fields:
                merged, _failures = await self._fan_out(method, request, kwargs)
                return merged
            if "repository" in fields:
                return await getattr(self.stubs[self.shard_of(request.repository)], method)(request, **kwargs)
            if "location" in fields:
                shard = self.shard_of(request.location.repository)
                return await getattr(self.stubs[shard], method)(request, **kwargs)
            if "locations" in fields:
                return await self._split_locations(method, request, kwargs)
            return await getattr(self.stubs[0], method)(request, **kwargs)

        return call

    async def _fan_out(
        self, method: str, request: Any, kwargs: dict[str, Any]
    ) -> tuple[Any, list[ShardFailure]]:
        import asyncio

        if request.repositories:
            groups: dict[int, list[str]] = {}
            for repo in request.repositories:
                groups.setdefault(self.shard_of(repo), []).append(repo)
        else:
            groups = {i: [] for i in range(len(self.stubs))}
        calls = []
        for shard, repos in groups.items():
            sub = type(request)()
            sub.CopyFrom(request)
            del sub.repositories[:]
            sub.repositories.extend(repos)
            calls.append(getattr(self.stubs[shard], method)(sub, **kwargs))
        results = await asyncio.gather(*calls, return_exceptions=True)
        answers = [r for r in results if not isinstance(r, BaseException)]
        failures = [
            (self.addresses[s], r)
            for s, r in zip(groups, results, strict=True)
            if isinstance(r, BaseException)
        ]
        if not answers:
            raise failures[0][1]
        failed: list[ShardFailure] = []
        for address, error in failures:
            if isinstance(error, grpc.aio.AioRpcError) and error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise error  # the request is wrong everywhere: say so rather than degrade
            reason = (
                f"{error.code().name}: {error.details()}"
                if isinstance(error, grpc.aio.AioRpcError)
                else str(error)
            )
            failed.append((address, reason))
        return merge_responses(answers), failed

    async def _split_locations(self, method: str, request: Any, kwargs: dict[str, Any]) -> Any:
        import asyncio

        positions: dict[int, list[int]] = {}
        for i, loc in enumerate(request.locations):
            positions.setdefault(self.shard_of(loc.repository), []).append(i)
        calls = []
        for shard, idxs in positions.items():
            sub = type(request)()
            sub.locations.extend(request.locations[i] for i in idxs)
            calls.append(getattr(self.stubs[shard], method)(sub, **kwargs))
        results = await asyncio.gather(*calls)
        values = [0.0] * len(request.locations)
        for idxs, resp in zip(positions.values(), results, strict=True):
            for i, v in zip(idxs, resp.values, strict=True):
                values[i] = v
        out = type(results[0])() if results else None
        if out is not None:
            out.values.extend(values)
        return out


def merge_responses(answers: list[Any]) -> Any:
    """One response from several shards': lists concatenated (hits by score), counters summed, flags or-ed."""
    if len(answers) == 1:
        return answers[0]
    out = type(answers[0])()
    out.CopyFrom(answers[0])
    for other in answers[1:]:
        for field in out.DESCRIPTOR.fields:
            name = field.name
            if field.is_repeated:
                getattr(out, name).extend(getattr(other, name))
            elif name in MERGED_COUNTERS:
                setattr(out, name, getattr(out, name) + getattr(other, name))
            elif name in MERGED_FLAGS:
                setattr(out, name, getattr(out, name) or getattr(other, name))
            elif name in MERGED_NAMES and getattr(other, name) not in getattr(out, name).split("+"):
                setattr(out, name, "+".join(filter(None, [getattr(out, name), getattr(other, name)])))
    if "hits" in {f.name for f in out.DESCRIPTOR.fields}:
        hits = sorted(out.hits, key=lambda h: -h.score)
        for rank, h in enumerate(hits):  # ranks were per shard; now they are positions in the merged list
            for s in h.leg_scores:
                s.rank = rank
        del out.hits[:]
        out.hits.extend(hits)
    return out
