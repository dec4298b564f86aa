"""The indexer's worker processes give the same files as a parse in this process, and a dead worker costs no file."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from codesearch.orchestrator.indexed_file import index_file
from codesearch.orchestrator.parse_pool import MIN_FILES, FileParser, cpu_quota

SOURCES = {
    "pkg/config.py": b'"""Settings."""\n\n\nclass Config:\n    def load(self, path):\n        return parse(path)\n',
    "src/main.rs": b"/// Entry.\nfn main() {\n    let x = run();\n}\n\nfn run() -> i32 { 1 }\n",
    "web/app.ts": b"export function start(port: number) {\n  return listen(port);\n}\n",
    "README.md": b"# Title\n\nSome words.\n\n## Usage\n\nMore words.\n",
}


def _parse_all(parser: FileParser) -> dict[str, tuple[bytes, bytes | None]]:
    async def run() -> dict[str, tuple[bytes, bytes | None]]:
        out = {}
        for path, data in SOURCES.items():
            indexed, parsed = await parser.parse("repo", path, data, None)
            out[path] = (indexed.SerializeToString(), parsed.SerializeToString() if parsed else None)
        return out

    return asyncio.run(run())


def _in_process() -> dict[str, tuple[bytes, bytes | None]]:
    out = {}
    for path, data in SOURCES.items():
        indexed, parsed = index_file("repo", path, data)
        out[path] = (indexed.SerializeToString(), parsed.SerializeToString() if parsed else None)
    return out


def test_a_small_run_parses_in_this_process() -> None:
    assert FileParser(workers=2, files_to_parse=MIN_FILES - 1).pool is None
    assert FileParser(workers=1, files_to_parse=10 * MIN_FILES).pool is None


def test_workers_give_the_same_files_as_this_process() -> None:
    parser = FileParser(workers=2, files_to_parse=MIN_FILES)
    assert parser.pool is not None
    assert _parse_all(parser) == _in_process()


def test_a_killed_worker_is_replaced_by_a_thread_and_the_next_run_gets_a_new_pool() -> None:
    parser = FileParser(workers=2, files_to_parse=MIN_FILES)
    pool = parser.pool
    assert pool is not None
    _parse_all(parser)  # the workers are up
    for pid in list(pool._processes):  # the pool's own record of its workers
        os.kill(pid, signal.SIGKILL)
    assert _parse_all(parser) == _in_process()
    assert parser.pool is None
    fresh = FileParser(workers=2, files_to_parse=MIN_FILES)
    assert fresh.pool is not None and fresh.pool is not pool
    assert _parse_all(fresh) == _in_process()


def test_workers_leave_with_the_process(tmp_path: Path) -> None:
    """A worker whose parent died (kill -9 of a server) exits instead of lingering."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from codesearch.orchestrator.parse_pool import FileParser, MIN_FILES\n"
        "if __name__ == '__main__':\n"
        "    p = FileParser(2, MIN_FILES)\n"
        "    asyncio.run(p.parse('r', 'a.py', b'def f():\\n    pass\\n', None))\n"
        "    print(' '.join(str(pid) for pid in p.pool._processes), flush=True)\n"
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
