"""Background embedding gives way to what a user waits for: updates being applied, and queries being embedded.

On 2 cores two model calls at once make a query wait for a whole document batch (measured 4.7 s instead of
~20 ms), so the background worker embeds in small sub-batches and checks here before each one.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

QUERY_YIELD_POLL_S = 0.005  # how often the background worker checks whether queries are done
QUERY_YIELD_MAX_S = 5.0  # a stream of queries may not starve indexing for longer than this per sub-batch


class Foreground:
    """Counts the updates and queries in flight; the background worker waits on them (wait_turn)."""

    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop
        self._lock = threading.Lock()
        self._in_flight = {"query": 0, "update": 0}

    @contextlib.contextmanager
    def _counting(self, kind: str) -> Iterator[None]:
        with self._lock:
            self._in_flight[kind] += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight[kind] -= 1

    def query(self) -> contextlib.AbstractContextManager[None]:
        """A query is being embedded for the length of the block."""
        return self._counting("query")

    def update(self) -> contextlib.AbstractContextManager[None]:
        """An update is being applied for the length of the block."""
        return self._counting("update")

    def wait_turn(self) -> None:
        """Waits while an update is being applied (its static vectors and the other legs' indexing are what
        the user waits for), and for queries in flight up to QUERY_YIELD_MAX_S; returns at once on stop."""
        waited = 0.0
        while not self._stop.is_set():
            if self._in_flight["update"]:
                time.sleep(QUERY_YIELD_POLL_S)
            elif self._in_flight["query"] and waited < QUERY_YIELD_MAX_S:
                time.sleep(QUERY_YIELD_POLL_S)
                waited += QUERY_YIELD_POLL_S
            else:
                return
