"""The indexer's parsing in worker processes (common/process_pool.py).

tree-sitter's parse and the chunker hold the GIL, so threads add nothing: on the standard library the indexing loop
spent ~2.7 s in them on one core while the second stood idle. The workers return each file as serialised
messages, which cost less to carry than the objects they hold.
"""

from __future__ import annotations

import asyncio

from codesearch.common.languages import ProjectHint
from codesearch.common.process_pool import WORKER_FAILURES, give_up, pool_for, worker_count
from codesearch.orchestrator.indexed_file import index_file
from codesearch.v1 import common_pb2

# Files handed to the workers and not yet collected, per worker: enough that a worker never waits for the next
# file, few enough that the files' bytes in flight stay small.
IN_FLIGHT_PER_WORKER = 8


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
        self.pool = pool_for(workers, files_to_parse, "parse")
        self.max_in_flight = worker_count(workers) * IN_FLIGHT_PER_WORKER

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
            except WORKER_FAILURES as err:
                give_up(pool, err, "parse")
                self.pool = None
            else:
                indexed = common_pb2.IndexedFile.FromString(indexed_bytes)
                return indexed, (common_pb2.ParsedFile.FromString(parsed_bytes) if parsed_bytes else None)
        return await asyncio.to_thread(index_file, repository, rel_path, data, project)
