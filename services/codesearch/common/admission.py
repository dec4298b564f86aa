"""Admission control: a bounded number of expensive calls at once, a bounded queue, a fast refusal beyond it.

Cheap calls never wait here, so one client's heavy queries cannot starve the others' cheap ones; a heavy call
beyond the queue is refused at once with RESOURCE_EXHAUSTED (retry later) instead of queueing without end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc

from codesearch import _native
from codesearch.common.errors import ServiceError

# Expensive calls running at once per gate. Each is CPU-bound (a full scan, a long text, a rerank); two at a time
# leave the cheap calls a core on a 2-core machine. Measured with it: `codesearch bench soak --seconds 120` over
# click, the well-behaved clients' p99 was 1.87x their p99 without the fuzz (506.8 / 270.6 ms), 0 errors.
MAX_RUNNING = 2
# Expensive calls waiting for a slot per gate; beyond this a call is refused (it would wait past any deadline).
MAX_QUEUED = 8


class Gate:
    """One leg's (or the orchestrator's) admission for expensive calls."""

    def __init__(self, name: str, max_running: int = MAX_RUNNING, max_queued: int = MAX_QUEUED) -> None:
        self.name = name
        self.max_queued = max_queued
        self._slots = asyncio.Semaphore(max_running)
        self._waiting = 0
        self.refused = 0  # calls refused so far (for tests and stats)

    @contextlib.asynccontextmanager
    async def admit(self, expensive: bool) -> AsyncIterator[None]:
        """Runs the body at once when cheap; when expensive, in a slot, after a bounded wait, or refuses."""
        if not expensive:
            yield
            return
        if self._slots.locked() and self._waiting >= self.max_queued:
            self.refused += 1
            raise ServiceError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.name}: too many expensive queries at once ({self.max_queued} waiting); retry later",
            )
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._slots.release()


def full_scan(pattern: str, is_regex: bool, case_sensitive: bool) -> bool:
    """A trigram search whose pattern requires no trigram reads every file: the expensive kind. The planner
    answers in microseconds (bounded in the pattern's length); an invalid pattern is refused later, cheaply."""
    try:
        return not _native.requires_trigrams(pattern, is_regex, case_sensitive)
    except ValueError:
        return False
