"""Worker processes that parse and chunk files for the indexer, one pool per process.

tree-sitter's parse and the chunker hold the GIL, so threads add nothing: on the standard library the indexing loop
spent ~2.7 s in them on one core while the second stood idle. Workers are spawned (never forked: the parent runs
gRPC threads), live as long as the process, and return each file as serialised messages, which cost less to carry
than the objects they hold.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from codesearch.common.languages import ProjectHint
from codesearch.orchestrator.indexed_file import index_file
from codesearch.v1 import common_pb2

# A run parses in the workers only when it has at least this many files to parse: a watched save (1 file) or a
# small commit delta is parsed in a thread at once, without waiting on a worker's start (~0.5 s to spawn one).
MIN_FILES = 64
# Files handed to the workers and not yet collected, per worker: enough that a worker never waits for the next
# file, few enough that the files' bytes in flight stay small.
IN_FLIGHT_PER_WORKER = 8

log = logging.getLogger(__name__)
_pool: ProcessPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()


def usable_cores() -> int:
    """The cores this process may use: its affinity (a container's cpuset), capped by a CPU quota (a Kubernetes
    CPU limit), which the affinity does not show."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota()
    return max(1, min(cores, math.ceil(quota))) if quota is not None else cores


def cpu_quota(cgroup: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs the cgroup grants (quota / period), or None without a limit (cgroup v2, then v1)."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None


def _pool_of(workers: int) -> ProcessPoolExecutor:
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers != workers:
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            _pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn"), initializer=_exit_with_parent
            )
            _pool_workers = workers
        return _pool


def _exit_with_parent() -> None:
    """In a worker: exit when the parent process dies. A worker waiting for work would otherwise outlive a
    `kill -9` of its server, since it holds both ends of the pool's queue and never reads an end of file."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch(sentinel: int) -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(0)

    threading.Thread(target=watch, args=(parent.sentinel,), daemon=True, name="parent-watch").start()


def _drop_broken(pool: ProcessPoolExecutor) -> None:
    """Forgets a pool whose worker died (the next run starts a new one)."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def _parse_serialised(
    repository: str, rel_path: str, data: bytes, project: ProjectHint | None
) -> tuple[bytes, bytes | None]:
    """In a worker: the file's chunks and parse, serialised."""
    indexed, parsed = index_file(repository, rel_path, data, project)
    return indexed.SerializeToString(), (parsed.SerializeToString() if parsed is not None else None)


ParsedPair = tuple[common_pb2.IndexedFile, common_pb2.ParsedFile | None]


class FileParser:
    """Parses one run's files, in worker processes when the run is large enough, else in a thread."""

    def __init__(self, workers: int, files_to_parse: int) -> None:
        self.pool: ProcessPoolExecutor | None = None
        if workers > 1 and files_to_parse >= MIN_FILES:
            try:
                self.pool = _pool_of(workers)
            except OSError as err:  # e.g. no writable /dev/shm for the pool's locks: parse here instead
                log.warning("parse workers unavailable (%s); parsing in this process", err)
        self.max_in_flight = max(workers, 1) * IN_FLIGHT_PER_WORKER

    async def parse(
        self, repository: str, rel_path: str, data: bytes, project: ProjectHint | None
    ) -> ParsedPair:
        """One file's chunks and parse; a worker that died or could not start is replaced by a thread."""
        pool = self.pool
        if pool is not None:
            loop = asyncio.get_running_loop()
            try:
                indexed_bytes, parsed_bytes = await loop.run_in_executor(
                    pool, _parse_serialised, repository, rel_path, data, project
                )
            except (
                BrokenProcessPool,
                OSError,
            ) as err:  # index_file itself reads no file: OSError is the pool's
                log.warning("parse workers failed (%s); parsing in this process", err)
                _drop_broken(pool)
                self.pool = None
            else:
                indexed = common_pb2.IndexedFile.FromString(indexed_bytes)
                return indexed, (common_pb2.ParsedFile.FromString(parsed_bytes) if parsed_bytes else None)
        return await asyncio.to_thread(index_file, repository, rel_path, data, project)
