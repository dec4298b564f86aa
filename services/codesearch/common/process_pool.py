"""Worker processes for CPU-bound Python work, one pool per process, shared by its services.

Python code holds the GIL, so threads add nothing to parsing files or building a graph: the indexer parses in
these workers (orchestrator/parse_pool.py) and the graph leg builds its database in them (graph/service.py: the
standard library's build took 1.1-1.3 s alone, 3.1-3.4 s beside the other legs' updates in one process). Workers
are spawned (never forked: the parent runs gRPC threads), live as long as the process and exit with it.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

# Work of at least this many files goes to the workers (a large index run, a large graph update); a watched save
# (1 file) or a small commit delta is done in place at once, without waiting on a worker's start (~0.5 s to spawn).
MIN_FILES = 64
# What a pool that cannot run its work raises: a worker that died, or no pool to be had (no writable /dev/shm for
# its locks). The work itself raises neither: parsing reads no file, and a graph build's errors are sqlite's.
WORKER_FAILURES = (BrokenProcessPool, OSError)

log = logging.getLogger(__name__)
_pool: ProcessPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()


def pool_for(configured: int, files: int, work: str) -> ProcessPoolExecutor | None:
    """The shared pool for `files` files of `work`, or None: do it in this process (small work, one worker
    configured with CODESEARCH_INDEX_WORKERS, or a pool that cannot start, which is logged)."""
    workers = worker_count(configured)
    if workers < 2 or files < MIN_FILES:
        return None
    try:
        return shared_pool(workers)
    except WORKER_FAILURES as err:
        log.warning("%s workers unavailable (%s); working in this process", work, err)
        return None


def give_up(pool: ProcessPoolExecutor, err: BaseException, work: str) -> None:
    """After a WORKER_FAILURES error: logged, and the pool forgotten, so its caller works in this process."""
    log.warning("%s workers failed (%s); working in this process", work, err)
    drop_broken(pool)


def worker_count(configured: int) -> int:
    """Workers for a setting (CODESEARCH_INDEX_WORKERS): itself, or 0 for one per usable core."""
    return configured or usable_cores()


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


def shared_pool(workers: int) -> ProcessPoolExecutor:
    """The process's pool of `workers` spawned workers, made on first use (OSError where it cannot start)."""
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
    `kill -9` of its server, since it holds both ends of the pool's queue and never reads an end of file. A
    Ctrl-C is the parent's to handle: a worker that took it would print a traceback of its own and fail the
    file it was parsing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch(sentinel: int) -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(0)

    threading.Thread(target=watch, args=(parent.sentinel,), daemon=True, name="parent-watch").start()


def drop_broken(pool: ProcessPoolExecutor) -> None:
    """Forgets a pool whose worker died (the next caller starts a new one)."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)
