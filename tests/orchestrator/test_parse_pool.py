"""The indexer's parse workers give the same files as a parse in this process, and a dead worker costs no file."""

from __future__ import annotations

import asyncio
import os
import signal

from codesearch.common.process_pool import MIN_FILES
from codesearch.orchestrator.indexed_file import index_file
from codesearch.orchestrator.parse_pool import FileParser

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
