"""The indexing pipeline: walk, read, hash, chunk, and send each leg the files that changed for it.

Each leg keeps its own manifest (path -> hash) here, so a leg that missed a run (down, model unavailable)
catches up on the next one. A leg commits its update atomically; the manifest of a leg is written only after
that leg committed, so an interrupted run is simply redone.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import grpc

from codesearch.common import sensitive
from codesearch.common.errors import ServiceError, check_repo_name, failed_precondition, invalid
from codesearch.common.index_update import update_messages
from codesearch.common.languages import ProjectHint, detect_language, is_header
from codesearch.common.metrics import files_indexed, index_runs
from codesearch.common.parsing import uses_macros
from codesearch.common.sources import Source, SourceFile
from codesearch.common.sources.choose import default_name, open_source
from codesearch.config import Settings
from codesearch.orchestrator.chunker import chunking_fingerprint
from codesearch.orchestrator.indexed_file import graph_file
from codesearch.orchestrator.legs import LegClients
from codesearch.orchestrator.parse_pool import FileParser
from codesearch.orchestrator.registry import Registry, RepoRecord
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, search_pb2, vector_pb2

PROGRESS_EVERY_FILES = 50  # a progress message per this many files: smooth bar, little chatter
INDEXED_LEGS = ("keyword", "graph", "vector")  # legs that hold per-repository data; keyword is required
LEG_UPDATE_TIMEOUT_S = 1800  # a whole large repository through one leg; the vector leg embeds after commit
# A run that sends at most this many files (a watched save, a small commit delta) updates the keyword leg first,
# then the graph and vector legs: on 2 shared cores the graph's update (0.6-3.6 s for one file of the standard
# library) ran beside the keyword commit (0.4-1.7 s) and slowed it (codesearch_lab/bench/freshness.py). A
# larger run updates all legs at once, where overlapping them saves more than it costs.
KEYWORD_FIRST_MAX_FILES = 64
MAX_WARNINGS = 50  # warnings listed in progress; the count is always exact


def _with_header_macros(project: ProjectHint, source: Source, files: list[SourceFile]) -> ProjectHint:
    """The project's attribute-like macros, from the `#define`s of its C-family headers (none: an empty table)."""
    headers = (source.read(wf)[0] for wf in files if is_header(wf.rel_path))
    return project.with_macros(data for data in headers if data is not None)


def check_root(path: str, settings: Settings) -> Path:
    """The directory to index, or INVALID_ARGUMENT/FAILED_PRECONDITION saying plainly what is wrong."""
    if not path.strip():
        raise invalid("path is empty")
    root = Path(path).expanduser()
    if not root.exists():
        raise invalid(f"{path}: no such directory")
    root = root.resolve()
    if not root.is_dir():
        raise invalid(f"{path}: not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise invalid(f"{path}: directory is not readable")
    if settings.allowed_roots and not any(root.is_relative_to(r) for r in settings.allowed_roots):
        allowed = ", ".join(str(r) for r in settings.allowed_roots)
        raise failed_precondition(
            f"{root} is outside the allowed roots ({allowed}); see CODESEARCH_ALLOWED_ROOTS"
        )
    sensitive.check_not_system_dir(root, settings.allowed_roots)  # issue 20
    return root


@dataclass
class _Run:
    name: str
    root: Path
    source: Source
    watch: bool = False
    started: float = field(default_factory=time.monotonic)
    progress: search_pb2.IndexRepositoryResponse = field(default_factory=search_pb2.IndexRepositoryResponse)

    def snapshot(self, phase: search_pb2.IndexPhase) -> search_pb2.IndexRepositoryResponse:
        self.progress.repository = self.name
        self.progress.phase = phase
        self.progress.elapsed_seconds = time.monotonic() - self.started
        out = search_pb2.IndexRepositoryResponse()
        out.CopyFrom(self.progress)
        return out

    def warn(self, message: str) -> None:
        if len(self.progress.warnings) < MAX_WARNINGS:
            self.progress.warnings.append(message)

    def skip(self, rel_path: str, reason: str) -> None:
        """A file left out: counted, and per reason (exact), and listed among the warnings (the first 50)."""
        self.progress.files_skipped += 1
        self.progress.skipped_reasons[reason] += 1
        self.warn(f"{rel_path}: skipped, {reason}")


class Indexer:
    def __init__(self, settings: Settings, legs: LegClients, registry: Registry) -> None:
        self.settings = settings
        self.legs = legs
        self.registry = registry
        self._locks: dict[str, asyncio.Lock] = {}

    async def run(
        self, request: search_pb2.IndexRepositoryRequest
    ) -> AsyncIterator[search_pb2.IndexRepositoryResponse]:
        root = check_root(request.path, self.settings)
        if request.watch and request.ref:
            raise invalid("watch is for directory sources; a git ref changes only by new commits")
        source = await asyncio.to_thread(
            open_source,
            root,
            request.ref,
            self.settings.max_file_bytes,
            list(request.exclude),
            list(request.changed_paths),
        )
        name = check_repo_name(request.name or default_name(root, request.ref))
        existing = self.registry.get(name)
        if existing is not None and existing.root != str(root):
            raise failed_precondition(
                f"repository {name!r} is already indexed from {existing.root}; choose another --name or delete it"
            )
        lock = self._locks.setdefault(name, asyncio.Lock())
        if lock.locked():
            raise ServiceError(grpc.StatusCode.ABORTED, f"repository {name!r} is being indexed already")
        async with lock:
            async for progress in self._run_locked(
                _Run(name, root, source, request.watch), request.force_full
            ):
                yield progress

    async def _run_locked(
        self, run: _Run, force_full: bool
    ) -> AsyncIterator[search_pb2.IndexRepositoryResponse]:
        yield run.snapshot(search_pb2.INDEX_PHASE_SCANNING)
        listing = await asyncio.to_thread(run.source.listing)
        for rel, reason in listing.skipped:
            run.skip(rel, reason)
        run.progress.files_total = len(listing.files)
        run.progress.commit, run.progress.ref = listing.commit, run.source.ref
        yield run.snapshot(search_pb2.INDEX_PHASE_INDEXING)

        manifests = self.registry.manifest(run.name)
        leg_manifest = {leg: ({} if force_full else dict(manifests.get(leg, {}))) for leg in INDEXED_LEGS}
        available = [leg for leg in INDEXED_LEGS if self.legs.legs[leg].stub is not None]
        if "keyword" not in available:
            raise failed_precondition("the keyword service is not configured; nothing can be indexed")

        previous_record = self.registry.get(run.name)
        maybe_changed = await self._delta(run, previous_record, force_full)
        current: dict[str, str] = {}  # path -> hash of every readable file now
        to_send: dict[str, common_pb2.IndexedFile] = {}  # path -> file, for files some leg lacks
        parses: dict[str, common_pb2.ParsedFile | None] = {}  # path -> its one parse, for the graph leg
        project = ProjectHint.from_paths(wf.rel_path for wf in listing.files)  # decides what a `.h` is
        knowns = [_known_digest(wf, maybe_changed, leg_manifest, available) for wf in listing.files]
        parser = FileParser(self.settings.index_workers, knowns.count(None))
        parsing: set[asyncio.Future[None]] = set()  # files in the parser's hands, collected as they finish

        async def parse(rel_path: str, data: bytes, project: ProjectHint) -> None:
            indexed, parses[rel_path] = await parser.parse(run.name, rel_path, data, project)
            to_send[rel_path] = indexed
            run.progress.chunks += len(indexed.chunks)

        async def collect(at_most: int) -> None:
            """Waits until at most `at_most` files are still being parsed; a parse's error ends the run."""
            nonlocal parsing
            while len(parsing) > at_most:
                done, parsing = await asyncio.wait(parsing, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()

        try:
            for i, (wf, known) in enumerate(zip(listing.files, knowns, strict=True)):
                if known is not None:
                    current[wf.rel_path] = known
                    run.progress.files_unchanged += 1
                    run.progress.files_done = i + 1
                    continue
                data, reason = await asyncio.to_thread(run.source.read, wf)
                run.progress.files_read += 1
                if data is not None and not self.settings.index_secrets:  # issue 20: secrets stay out
                    secret = sensitive.secret_reason(wf.rel_path, data)
                    data, reason = (None, secret) if secret else (data, reason)
                if data is None:
                    run.skip(wf.rel_path, reason)
                else:
                    # The content and how it is cut: a new chunker re-chunks every file (vectors: the cache).
                    digest = hashlib.sha256(chunking_fingerprint().encode() + b"\0" + data).hexdigest()
                    current[wf.rel_path] = digest
                    if any(leg_manifest[leg].get(wf.rel_path) != digest for leg in available):
                        # The headers are read once, when the first C-family file is to be parsed: not on an
                        # unchanged run, nor for a run that parses none.
                        if project.macros is None and uses_macros(
                            detect_language(wf.rel_path, data, project)
                        ):
                            project = await asyncio.to_thread(
                                _with_header_macros, project, run.source, listing.files
                            )
                        parsing.add(asyncio.ensure_future(parse(wf.rel_path, data, project)))
                        await collect(parser.max_in_flight)
                        if manifests.get("keyword", {}).get(wf.rel_path) != digest or force_full:
                            run.progress.files_changed += 1
                        else:
                            run.progress.files_unchanged += 1
                    else:
                        run.progress.files_unchanged += 1
                run.progress.files_done = i + 1
                if (i + 1) % PROGRESS_EVERY_FILES == 0:
                    yield run.snapshot(search_pb2.INDEX_PHASE_INDEXING)
            await collect(0)
        finally:
            for task in parsing:  # the run failed or its caller left: stop what has not started
                task.cancel()
        run.progress.files_deleted = len(set(manifests.get("keyword", {})) - set(current))
        yield run.snapshot(search_pb2.INDEX_PHASE_COMMITTING)

        replace_all = force_full or not manifests
        version = (previous_record.index_version if previous_record else 0) + 1
        _mark_pending_unknown(self.registry, run.name, manifests, current, leg_manifest, available)

        def update(leg: str) -> Awaitable[int]:
            return self._update_leg(
                leg, run.name, leg_manifest[leg], current, to_send, parses, replace_all, version
            )

        results: list[int | BaseException]
        if not replace_all and len(to_send) + run.progress.files_deleted <= KEYWORD_FIRST_MAX_FILES:
            # The edit is searchable once the keyword leg has committed; the others follow without competing.
            first = await asyncio.gather(
                update(available[0]), return_exceptions=True
            )  # keyword: INDEXED_LEGS[0]
            rest = await asyncio.gather(*(update(leg) for leg in available[1:]), return_exceptions=True)
            results = [*first, *rest]
        else:
            results = await asyncio.gather(*(update(leg) for leg in available), return_exceptions=True)
        previous = self.registry.get(run.name)
        chunks_total = previous.chunks if previous else 0
        for leg, result in zip(available, results, strict=True):
            if isinstance(result, BaseException):
                reason = (result.details() or "") if isinstance(result, grpc.aio.AioRpcError) else str(result)
                if leg == "keyword":
                    raise ServiceError(_update_failure_code(result), f"keyword index update failed: {reason}")
                run.progress.degraded_legs.append(f"{leg}: {reason}")
                continue
            manifests[leg] = dict(current)
            if leg == "keyword" and result >= 0:
                chunks_total = result
        for leg in INDEXED_LEGS:
            if leg not in available:
                run.progress.degraded_legs.append(f"{leg}: not configured")
        self.registry.save_manifest(run.name, manifests)
        self.registry.put(
            RepoRecord(
                name=run.name,
                root=str(run.root),
                index_version=version,
                indexed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                files=len(current),
                chunks=chunks_total,
                commit=listing.commit,
                ref=run.source.ref,
                chunking=chunking_fingerprint(),
                watched=run.watch or bool(previous and previous.watched),
            )
        )
        run.progress.index_version = version
        for outcome, count in (
            ("changed", run.progress.files_changed),
            ("unchanged", run.progress.files_unchanged),
            ("deleted", run.progress.files_deleted),
            ("skipped", run.progress.files_skipped),
        ):
            files_indexed.add(count, {"repository": run.name, "outcome": outcome})
        index_runs.add(1, {"repository": run.name})
        yield run.snapshot(search_pb2.INDEX_PHASE_DONE)

    async def _delta(self, run: _Run, previous: RepoRecord | None, force_full: bool) -> set[str] | None:
        """The paths that may differ from the last run (the rest need not be read), or None: read all.

        Trusted only when the last run read the same kind of source at the same ref, under the same chunker."""
        if force_full or previous is None or previous.ref != run.source.ref:
            return None
        if previous.chunking != chunking_fingerprint():
            return None
        changed = await asyncio.to_thread(run.source.changed_since, previous.commit)
        if changed is not None:
            run.progress.delta_from_commit = previous.commit
        return changed

    async def _update_leg(
        self,
        leg: str,
        repo: str,
        manifest: dict[str, str],
        current: dict[str, str],
        to_send: dict[str, common_pb2.IndexedFile],
        parses: dict[str, common_pb2.ParsedFile | None],
        replace_all: bool,
        version: int,
    ) -> int:
        """Sends one leg the files whose hash differs from its manifest and the paths it should drop."""
        changed = [to_send[p] for p, h in current.items() if manifest.get(p) != h or replace_all]
        if leg == "graph":
            changed = [graph_file(f, parses.get(f.path)) for f in changed]
        deleted = [] if replace_all else sorted(set(manifest) - set(current))
        if not changed and not deleted and manifest:
            return -1
        request_type, method = {
            "keyword": (keyword_pb2.UpdateKeywordIndexRequest, "UpdateKeywordIndex"),
            "graph": (graph_pb2.UpdateGraphIndexRequest, "UpdateGraphIndex"),
            "vector": (vector_pb2.UpdateVectorIndexRequest, "UpdateVectorIndex"),
        }[leg]
        messages = update_messages(request_type, repo, changed, deleted, replace_all, version)
        # The leg's stub (present: `leg` is one of the available legs), a generated or a sharded one.
        response = await getattr(self.legs.legs[leg].stub, method)(
            iter(messages), timeout=LEG_UPDATE_TIMEOUT_S
        )
        return int(response.result.chunks_total)


# A manifest entry for a file a killed run may or may not have committed to the leg: never a real digest.
UNKNOWN_DIGEST = "unknown"


def _mark_pending_unknown(
    registry: Registry,
    name: str,
    manifests: dict[str, dict[str, str]],
    current: dict[str, str],
    leg_manifest: dict[str, dict[str, str]],
    available: list[str],
) -> None:
    """Before any leg commits: marks the paths about to change as unknown in the saved manifests (issue 20).

    A leg may commit and the process be killed before the manifests are saved; a manifest still naming the old
    content would then make the next run skip those files, and the leg would keep the killed run's content for
    good (seen as version B served after a full run of version A). So each such path is listed with an unknown
    digest: the next run sends it again if it is still there and deletes it if not (the leg may hold it)."""
    pending = {p for p, h in current.items() if any(leg_manifest[leg].get(p) != h for leg in available)}
    if not manifests or not pending:  # a first run replaces all; if killed, orphans.py removes what landed
        return
    unknown = dict.fromkeys(pending, UNKNOWN_DIGEST)
    registry.save_manifest(name, {leg: {**m, **unknown} for leg, m in manifests.items()})


def _known_digest(
    file: SourceFile,
    maybe_changed: set[str] | None,
    leg_manifest: dict[str, dict[str, str]],
    available: list[str],
) -> str | None:
    """The digest every available leg already holds for a file the source says did not change, else None."""
    if maybe_changed is None or file.rel_path in maybe_changed:
        return None
    digests = {leg_manifest[leg].get(file.rel_path) for leg in available}
    known = digests.pop() if len(digests) == 1 else None
    return None if known in (None, UNKNOWN_DIGEST) else known


# Statuses of a failed leg update the client should see as they are (disk full, data dir read-only, a bad file).
PASSED_THROUGH_CODES = frozenset(
    {
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    }
)


def _update_failure_code(error: BaseException) -> grpc.StatusCode:
    if isinstance(error, grpc.aio.AioRpcError) and error.code() in PASSED_THROUGH_CODES:
        return error.code()
    return grpc.StatusCode.UNAVAILABLE
