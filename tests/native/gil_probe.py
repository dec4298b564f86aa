"""Whether a native call releases the GIL: this thread keeps running while another thread makes the call."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

TRIES = 3  # a GIL-holding call stalls every try; the scheduler of a loaded machine rarely stalls two in a row
# A call must outlast thread start-up and a few of the interpreter's switch intervals (5 ms) for its stall to tell;
# it was 0.05 s, and a faster CI machine ran the trigram probe in 0.040-0.054 s (stalls of 4-8 ms) and failed.
MIN_CALL_S = 4 * sys.getswitchinterval()


def longest_stall(call: Callable[[], object]) -> tuple[float, float]:
    """(the longest this thread went without running, the call's wall time) while another thread runs `call`."""
    ticks: list[float] = []
    done = threading.Event()

    def work() -> None:
        call()
        done.set()

    worker = threading.Thread(target=work)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
    worker.join()
    elapsed = time.perf_counter() - start
    gaps = [b - a for a, b in zip([start, *ticks], [*ticks, time.perf_counter()], strict=True)]
    return max(gaps), elapsed


def assert_releases_gil(call: Callable[[], object]) -> None:
    """Holding the GIL stalls this thread for the whole call, on every try; a loaded machine's scheduler can also
    stall it once for a while (0.45 s of a 0.72 s call seen at a load of 5 on 2 cores), so one try in TRIES
    without a stall of half the call is the evidence."""
    tries = [longest_stall(call) for _ in range(TRIES)]
    assert all(elapsed > MIN_CALL_S for _, elapsed in tries), f"the workload is too small to tell: {tries}"
    assert any(stall < elapsed / 2 for stall, elapsed in tries), tries
