"""Keeps a directory's index fresh: file notifications (watchfiles: inotify through the Rust notify crate),
debounced, and one index run per burst of changes, told which paths changed so that only those are re-read.

While a run is going, new changes accumulate; the next run takes all of them, so a branch switch that touches
thousands of files is one run (or two, when it is still going on as the first run starts), never one per file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import DefaultFilter, awatch

from codesearch.common.walker import SKIP_DIRS

log = logging.getLogger(__name__)

# Quiet time that closes a batch of notifications: a saved file is in a batch ~this long after the save, and a
# scripted burst has no gap this long inside it (tests/orchestrator/test_watcher.py: 2,000 files, one run).
# Small beside the keyword leg's commit (~1 s for one stdlib file, codesearch_lab/bench/freshness.py).
QUIET_MS = 100
# The longest a continuous stream of changes is held before a run starts anyway (the rest goes to the next).
MAX_BATCH_MS = 5_000
RETRY_S = 2.0  # after a failed run (server restarting, leg down) its paths are retried this much later

Reindex = Callable[[set[str]], Awaitable[object]]  # called with root-relative paths; empty set: a full run


class TreeWatcher:
    """Watches `root`; calls `reindex(paths)` once at start (a full run) and then once per batch of changes."""

    def __init__(self, root: Path, reindex: Reindex) -> None:
        self.root = root.resolve()
        self.reindex = reindex
        self.runs = 0  # index runs done, the first (full) one included
        self.idle = asyncio.Event()  # set while no change waits and no run is going
        self._pending: set[str] = set()
        self._wake = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set."""
        notify = asyncio.create_task(self._collect(stop))
        await asyncio.sleep(0)  # awatch registers its inotify watches before its first suspension
        self._pending.add("")  # the first run reads everything: what changed before we watched is unknown
        self._wake.set()
        try:
            await self._run_batches(stop)
        finally:
            notify.cancel()
            await asyncio.gather(notify, return_exceptions=True)

    async def _collect(self, stop: asyncio.Event) -> None:
        # The walker's skipped folders and watchfiles' own (.venv, .hypothesis...): events there index nothing.
        watch_filter = DefaultFilter(ignore_dirs=sorted(SKIP_DIRS | set(DefaultFilter.ignore_dirs)))
        async for changes in awatch(
            self.root, watch_filter=watch_filter, debounce=MAX_BATCH_MS, step=QUIET_MS, stop_event=stop
        ):
            paths = {self._relative(path) for _change, path in changes}
            self._pending |= {p for p in paths if p}
            self.idle.clear()
            self._wake.set()

    async def _run_batches(self, stop: asyncio.Event) -> None:
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                if not self._pending:
                    self.idle.set()
                waking = asyncio.create_task(self._wake.wait())
                await asyncio.wait({waking, stopping}, return_when=asyncio.FIRST_COMPLETED)
                waking.cancel()
                if stop.is_set():
                    return
                self._wake.clear()
                batch, self._pending = self._pending, set()
                if not batch:
                    continue
                full = "" in batch
                try:
                    await self.reindex(set() if full else batch)
                    self.runs += 1
                except Exception as e:  # the watcher outlives a failed run: it is retried with later changes
                    log.warning("re-index of %s failed (%s); retrying in %.0f s", self.root, e, RETRY_S)
                    self._pending |= batch
                    await asyncio.sleep(RETRY_S)
                    self._wake.set()
        finally:
            stopping.cancel()

    def _relative(self, path: str) -> str:
        """The root-relative path; "" for the root itself or a path outside it (nothing to name)."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return ""
        return "" if rel == "." else rel


class Watchers:
    """The directories a server watches, by repository name; each watcher runs as a task on the server's loop."""

    def __init__(self) -> None:
        self._running: dict[str, tuple[asyncio.Task[None], asyncio.Event]] = {}

    def start(self, name: str, root: Path, reindex: Reindex) -> None:
        """Starts watching (a full run first); a repository already watched is left as it is."""
        if name in self._running and not self._running[name][0].done():
            return
        stop = asyncio.Event()
        self._running[name] = (
            asyncio.get_running_loop().create_task(TreeWatcher(root, reindex).run(stop)),
            stop,
        )

    def watching(self, name: str) -> bool:
        return name in self._running and not self._running[name][0].done()

    def stop(self, name: str) -> None:
        entry = self._running.pop(name, None)
        if entry is not None:
            entry[1].set()

    def stop_all(self) -> None:
        for name in list(self._running):
            self.stop(name)
