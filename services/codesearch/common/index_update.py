"""Reads an index update stream (header, files and deletions, commit) into one all-or-nothing batch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from codesearch.common.errors import check_repo_name, invalid
from codesearch.v1 import common_pb2


@dataclass
class IndexBatch:
    """One update: what to add or replace, what to remove. Applied only when `committed` is true."""

    repository: str
    replace_all: bool
    index_version: int
    files: list[common_pb2.IndexedFile] = field(default_factory=list)
    deleted_paths: list[str] = field(default_factory=list)
    committed: bool = False


async def read_update_stream(requests: AsyncIterator[Any]) -> IndexBatch:
    """Collects a stream of messages that each carry `.update` (an IndexUpdate).

    Raises INVALID_ARGUMENT when the stream does not start with a header, repeats it, or ends without a commit.
    """
    batch: IndexBatch | None = None
    async for request in requests:
        update: common_pb2.IndexUpdate = request.update
        kind = update.WhichOneof("item")
        if kind == "header":
            if batch is not None:
                raise invalid("index update stream has two headers")
            header = update.header
            batch = IndexBatch(check_repo_name(header.repository), header.replace_all, header.index_version)
            continue
        if batch is None:
            raise invalid("index update stream must start with a header")
        if batch.committed:
            raise invalid("index update stream has messages after its commit")
        if kind == "file":
            if not update.file.path:
                raise invalid("indexed file without a path")
            batch.files.append(update.file)
        elif kind == "deleted_path":
            batch.deleted_paths.append(update.deleted_path)
        elif kind == "commit":
            if not update.commit:
                raise invalid("commit must be true")
            batch.committed = True
        else:
            raise invalid("empty index update message")
    if batch is None:
        raise invalid("empty index update stream")
    if not batch.committed:
        raise invalid("index update stream ended without a commit; nothing was changed")
    return batch


T = TypeVar("T")


class WriteLocks:
    """One lock per repository: a leg's updates and deletes of one repository never overlap."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def of(self, repository: str) -> asyncio.Lock:
        return self._locks.setdefault(repository, asyncio.Lock())


async def apply_update_stream(
    requests: AsyncIterator[Any], locks: WriteLocks, apply: Callable[[IndexBatch], T]
) -> tuple[IndexBatch, T]:
    """A leg's Update*Index RPC: reads the stream whole, then applies it in a worker thread (the event loop stays
    free for queries) under the repository's write lock. Returns the batch and what `apply` returned."""
    batch = await read_update_stream(requests)
    async with locks.of(batch.repository):
        return batch, await asyncio.to_thread(apply, batch)


def update_result(
    batch: IndexBatch, files_upserted: int, files_deleted: int, chunks_total: int, index_version: int
) -> common_pb2.IndexUpdateResult:
    return common_pb2.IndexUpdateResult(
        repository=batch.repository,
        files_upserted=files_upserted,
        files_deleted=files_deleted,
        chunks_total=chunks_total,
        index_version=index_version,
    )


def update_messages(
    request_type: Any,
    repository: str,
    files: list[common_pb2.IndexedFile],
    deleted_paths: list[str],
    replace_all: bool,
    index_version: int,
) -> list[Any]:
    """The client side: the messages of one update stream, ready to send."""
    msgs = [
        request_type(
            update=common_pb2.IndexUpdate(
                header=common_pb2.IndexUpdateHeader(
                    repository=repository, replace_all=replace_all, index_version=index_version
                )
            )
        )
    ]
    msgs += [request_type(update=common_pb2.IndexUpdate(file=f)) for f in files]
    msgs += [request_type(update=common_pb2.IndexUpdate(deleted_path=p)) for p in deleted_paths]
    msgs.append(request_type(update=common_pb2.IndexUpdate(commit=True)))
    return msgs
