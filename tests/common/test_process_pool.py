"""The process's shared worker pool: sized by the cores the process may use, gone with its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from codesearch.common.process_pool import cpu_quota, shared_pool, worker_count


def test_a_cpu_limit_caps_the_workers(tmp_path: Path) -> None:
    """A Kubernetes CPU limit shows only in the cgroup's quota, not in the affinity the workers are counted from."""
    assert cpu_quota(tmp_path) is None  # no cgroup files: no limit
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpu_quota(tmp_path) is None
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cpu_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").unlink()
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_quota(tmp_path) is None
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("200000\n")
    assert cpu_quota(tmp_path) == 2.0


def test_a_setting_of_zero_means_one_worker_per_usable_core() -> None:
    assert worker_count(3) == 3
    assert worker_count(0) >= 1


def test_workers_leave_with_the_process(tmp_path: Path) -> None:
    """A worker whose parent died (kill -9 of a server) exits instead of lingering."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from codesearch.common.process_pool import shared_pool\n"
        "if __name__ == '__main__':\n"
        "    pool = shared_pool(2)\n"
        "    pool.submit(sum, [1, 2]).result()\n"
        "    print(' '.join(str(pid) for pid in pool._processes), flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    pids = tmp_path / "pids"
    with pids.open("w") as out:  # a file, not a pipe: an orphaned worker would hold a pipe open
        done = subprocess.run([sys.executable, str(script)], stdout=out, stderr=subprocess.PIPE, timeout=60)
    workers = [int(pid) for pid in pids.read_text().split()]
    assert workers, done.stderr  # workers start on demand: one task, one worker
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in workers if _running(pid)]
        time.sleep(0.1)
    assert not alive, f"workers outlived their parent: {alive}"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (reaped by init later) has finished
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_worker_leaves_ctrl_c_to_its_parent() -> None:
    """Ctrl-C reaches every process of the terminal's group: a worker ignores it (no traceback, no failed file)."""
    assert shared_pool(2).submit(signal.getsignal, signal.SIGINT).result(timeout=60) == signal.SIG_IGN
