"""KeywordService: BM25 and trigram (literal/regex) search over per-repository snapshots."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

import grpc

from codesearch.common.deadline import budget_of, stopped
from codesearch.common.errors import (
    check_limit,
    check_query,
    check_repo_name,
    invalid,
    not_found,
    storage_error,
)
from codesearch.common.filters import path_spec
from codesearch.common.grpc_util import rpc, rpc_stream
from codesearch.common.index_update import IndexBatch, WriteLocks, apply_update_stream, update_result
from codesearch.common.snapshot import SnapshotDir, dir_bytes, list_repositories, open_listed, opening
from codesearch.common.text import coverage, words
from codesearch.config import MAX_QUERY_CHARS, Settings
from codesearch.keyword import snippet
from codesearch.keyword.bm25 import Bm25Hit, stems
from codesearch.keyword.store import KeywordSnapshot, apply_batch, open_snapshot
from codesearch.keyword.stream_grep import check_request, range_finder, stream_grep
from codesearch.v1 import common_pb2, keyword_pb2, keyword_pb2_grpc

SERVICE_NAME = keyword_pb2.DESCRIPTOR.services_by_name["KeywordService"].full_name
DEFAULT_LIMIT = 20  # a page of results
MAX_LIMIT = 1000  # the fusion stage never needs more
GLOB_OVERSAMPLE = 5  # BM25 has no path filter inside tantivy: fetch more, then filter
SNIPPET_LINES = 6  # lines of a chunk shown as its snippet: those with the most query words (snippet.py)
FOCUSED_HITS = (
    20  # hits whose snippet is focused on the query; deeper ones (fusion fodder) show the chunk's head
)
MAX_MATCH_LINES = 50  # matching line numbers reported per hit
MAX_LINE_CHARS = 500  # a minified line would drown the response


class KeywordServicer(keyword_pb2_grpc.KeywordServiceServicer):
    def __init__(self, settings: Settings) -> None:
        self.root = settings.service_dir("keyword")
        self._snapshots: dict[str, KeywordSnapshot] = {}
        self._write_locks = WriteLocks()

    # --- snapshots -------------------------------------------------------------------------------------------
    def _snapdir(self, repo: str) -> SnapshotDir:
        return SnapshotDir(self.root / check_repo_name(repo))

    def snapshot(self, repo: str) -> KeywordSnapshot:
        """The live snapshot of a repository, reopened when a newer generation was committed."""
        snapdir = self._snapdir(repo)
        current = snapdir.current()
        if current is None:
            raise not_found(f"repository {repo!r} is not indexed")
        cached = self._snapshots.get(repo)
        if cached is None or cached.generation != current:
            with opening(snapdir, f"repository {repo!r} is not indexed"):
                try:
                    cached = open_snapshot(current, snapdir.version())
                except Exception as e:
                    # tantivy takes a lock file even to read: a read-only data directory fails here, plainly.
                    raise storage_error(e, f"the lock file of {repo!r}'s keyword index", current) or e from e
            self._snapshots[repo] = cached
        return cached

    def _selected(self, repositories: list[str]) -> list[tuple[str, KeywordSnapshot]]:
        if repositories:
            return [(r, self.snapshot(r)) for r in repositories]
        return open_listed(list_repositories(self.root), lambda r: (r, self.snapshot(r)))

    # --- writes ----------------------------------------------------------------------------------------------
    @rpc
    async def UpdateKeywordIndex(
        self,
        request_iterator: AsyncIterator[keyword_pb2.UpdateKeywordIndexRequest],
        context: grpc.aio.ServicerContext,
    ) -> keyword_pb2.UpdateKeywordIndexResponse:
        def apply(batch: IndexBatch) -> tuple[SnapshotDir, int]:
            snapdir = self._snapdir(batch.repository)
            try:
                _generation, _files, chunks = apply_batch(snapdir, batch)
            except Exception as e:
                raise storage_error(e, f"the keyword index of {batch.repository!r}", snapdir.root) or e from e
            # Opened here, in the update's thread, so the first search after the commit does not pay for it
            # (6-233 ms on loaded cores); if it cannot be opened, that search reports why.
            with contextlib.suppress(Exception):
                self.snapshot(batch.repository)
            return snapdir, chunks

        batch, (snapdir, chunks) = await apply_update_stream(request_iterator, self._write_locks, apply)
        return keyword_pb2.UpdateKeywordIndexResponse(
            result=update_result(batch, len(batch.files), len(batch.deleted_paths), chunks, snapdir.version())
        )

    @rpc
    async def DeleteKeywordRepository(
        self, request: keyword_pb2.DeleteKeywordRepositoryRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.DeleteKeywordRepositoryResponse:
        lock = self._write_locks.of(request.repository)
        async with lock:
            self._snapshots.pop(request.repository, None)
            deleted = await asyncio.to_thread(self._snapdir(request.repository).delete)
        return keyword_pb2.DeleteKeywordRepositoryResponse(deleted=deleted)

    # --- reads -----------------------------------------------------------------------------------------------
    @rpc
    async def KeywordSearch(
        self, request: keyword_pb2.KeywordSearchRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.KeywordSearchResponse:
        check_query(request.query, MAX_QUERY_CHARS)
        limit = check_limit(request.limit, DEFAULT_LIMIT, MAX_LIMIT)
        if not math.isfinite(request.path_weight) or request.path_weight < 0:
            raise invalid(f"path_weight must be a finite number >= 0, got {request.path_weight}")
        stem_below = request.stem_below_coverage
        if not math.isfinite(stem_below) or not 0 <= stem_below <= 1:
            raise invalid(f"stem_below_coverage must be between 0 and 1, got {stem_below}")
        selected = self._selected(list(request.repositories))
        spec = path_spec(request.path_glob)
        fetch = limit * GLOB_OVERSAMPLE if spec else limit
        query_words = words(request.query)

        def run(stemmed: bool) -> list[common_pb2.Hit]:
            scored = []
            for repo, snap in selected:
                found = snap.bm25.search(
                    request.query, fetch, list(request.languages), request.path_weight, stemmed
                )
                scored += [(repo, snap, h) for h in found if spec is None or spec.match_file(h.doc.path)]
            # Several repositories: one list by BM25 score (same analyzer and scoring in each index).
            scored.sort(key=lambda rsh: (-rsh[2].score, rsh[0], rsh[2].doc.path, rsh[2].doc.start_line))
            return [
                _bm25_hit(
                    repo, h, snap.chunk_text(h.doc), rank, query_words if rank < FOCUSED_HITS else set()
                )
                for rank, (repo, snap, h) in enumerate(scored[:limit])
            ]

        def answer() -> keyword_pb2.KeywordSearchResponse:
            hits = run(stemmed=False)
            as_written = coverage(query_words, hits[0].snippet if hits else "")
            if stem_below <= as_written or not any(snap.bm25.has_stems for _repo, snap in selected):
                return keyword_pb2.KeywordSearchResponse(hits=hits)
            # The words as written did not meet in one chunk: the stems answer if they bring more of them together.
            stemmed = run(stemmed=True)
            if stemmed and coverage(stems(query_words), stemmed[0].snippet, stemmed_words) > as_written:
                return keyword_pb2.KeywordSearchResponse(hits=stemmed, stemmed=True)
            return keyword_pb2.KeywordSearchResponse(hits=hits)

        # Admission (a gate for long texts and full scans) is common/admission.py's LegAdmission interceptor.
        return await asyncio.to_thread(answer)

    @rpc
    async def Grep(
        self, request: keyword_pb2.GrepRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.GrepResponse:
        check_query(request.pattern, MAX_QUERY_CHARS, "pattern")
        limit = check_limit(request.limit, DEFAULT_LIMIT, MAX_LIMIT)
        is_regex = request.syntax == keyword_pb2.PATTERN_SYNTAX_REGEX
        selected = self._selected(list(request.repositories))
        budget = budget_of(context)

        def run() -> keyword_pb2.GrepResponse:
            resp = keyword_pb2.GrepResponse()
            found = []
            for repo, snap in selected:
                allowed = snap.allowed_ids(list(request.languages), request.path_glob)
                try:
                    result = snap.trigram.search(
                        request.pattern,
                        is_regex,
                        request.case_sensitive,
                        limit,
                        allowed,
                        timeout_s=budget.timeout_s,
                        cancel=budget.cancel,
                    )
                except ValueError as e:
                    raise invalid(f"invalid {'regex' if is_regex else 'pattern'}: {e}") from None
                except (TimeoutError, InterruptedError) as e:
                    raise stopped(e, "the trigram search") from None
                resp.candidate_files += result.candidate_files
                resp.total_files += result.total_files
                resp.full_scan = resp.full_scan or result.full_scan
                found += [(repo, snap, m) for m in result.matches]
            found.sort(key=lambda x: (-x[2].score, x[0], x[2].path, x[2].line))
            ranges_of = range_finder(request.pattern, is_regex, request.case_sensitive)
            for rank, (repo, snap, m) in enumerate(found[:limit]):
                resp.hits.append(
                    common_pb2.Hit(
                        location=common_pb2.Location(
                            repository=repo, path=m.path, start_line=m.line, end_line=m.line
                        ),
                        snippet=m.text[:MAX_LINE_CHARS],
                        score=m.score,
                        leg_scores=[
                            common_pb2.LegScore(leg=common_pb2.LEG_TRIGRAM, rank=rank, score=m.score)
                        ],
                        found_by=[common_pb2.LEG_TRIGRAM],
                        language=snap.files[m.path].language if m.path in snap.files else "",
                        match_lines=[m.line],
                        match_ranges=[
                            common_pb2.MatchRange(
                                line_number=m.line, start_column=r.start_column, end_column=r.end_column
                            )
                            for r in ranges_of(m.text)
                        ],
                    )
                )
            return resp

        return await asyncio.to_thread(run)

    @rpc_stream
    async def StreamGrep(
        self, request: keyword_pb2.StreamGrepRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[keyword_pb2.StreamGrepResponse]:
        budget = check_request(request, context.time_remaining())
        async for message in stream_grep(self._selected(list(request.repositories)), request, budget):
            yield message

    @rpc
    async def ReadFile(
        self, request: keyword_pb2.ReadFileRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.ReadFileResponse:
        snap = self.snapshot(request.repository)
        info = snap.files.get(request.path)
        content = snap.trigram.content(request.path) if info else None
        if info is None or content is None:
            raise not_found(f"{request.path!r} is not indexed in repository {request.repository!r}")
        lines = content.decode("utf-8", errors="replace").splitlines()
        start = max(1, request.start_line or 1)
        end = min(len(lines), request.end_line or len(lines))
        if request.start_line < 0 or request.end_line < 0 or (request.end_line and request.end_line < start):
            raise invalid(f"bad line range {request.start_line}-{request.end_line}")
        return keyword_pb2.ReadFileResponse(
            text="\n".join(lines[start - 1 : end]), total_lines=len(lines), language=info.language
        )

    @rpc
    async def ListFiles(
        self, request: keyword_pb2.ListFilesRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.ListFilesResponse:
        snap = self.snapshot(request.repository)
        return keyword_pb2.ListFilesResponse(
            files=[
                keyword_pb2.FileEntry(path=p, content_hash=i.content_hash, language=i.language, lines=i.lines)
                for p, i in sorted(snap.files.items())
            ]
        )

    @rpc
    async def GetKeywordStats(
        self, request: keyword_pb2.GetKeywordStatsRequest, context: grpc.aio.ServicerContext
    ) -> keyword_pb2.GetKeywordStatsResponse:
        resp = keyword_pb2.GetKeywordStatsResponse()
        for repo, snap in self._selected(list(request.repositories)):
            common: dict[str, Any] = {
                "repository": repo,
                "files": len(snap.files),
                "index_version": snap.version,
            }
            resp.bm25.append(
                common_pb2.LegIndexStats(
                    **common, items=snap.bm25.num_docs, disk_bytes=dir_bytes(snap.generation / "bm25")
                )
            )
            resp.trigram.append(
                common_pb2.LegIndexStats(
                    **common,
                    items=snap.trigram.num_files(),
                    disk_bytes=dir_bytes(snap.generation / "trigram"),
                    detail=f"postings {snap.trigram.postings_bytes()} B, content {snap.trigram.content_bytes()} B",
                )
            )
        return resp


def stemmed_words(text: str) -> set[str]:
    """The word stems of a text's `words` (coverage over stems)."""
    return stems(words(text))


def _bm25_hit(repo: str, h: Bm25Hit, text: str, rank: int, query_words: set[str]) -> common_pb2.Hit:
    doc, score = h.doc, h.score
    # An unfocused snippet is the chunk's head: split off only its lines (a chunk can be hundreds of lines).
    lines = text.split("\n") if query_words else text.split("\n", SNIPPET_LINES)
    start, end, matching = snippet.focus(lines, doc.start_line, query_words, SNIPPET_LINES)
    return common_pb2.Hit(
        location=common_pb2.Location(
            repository=repo, path=doc.path, start_line=doc.start_line, end_line=doc.end_line
        ),
        snippet="\n".join(line[:MAX_LINE_CHARS] for line in lines[start:end]),
        score=score,
        leg_scores=[common_pb2.LegScore(leg=common_pb2.LEG_KEYWORD, rank=rank, score=score)],
        match_lines=matching[:MAX_MATCH_LINES],
        found_by=[common_pb2.LEG_KEYWORD],
        language=doc.language,
        breadcrumb=list(doc.breadcrumb),
        symbol=doc.symbol,
    )


def register(server: grpc.aio.Server, settings: Settings) -> list[str]:
    keyword_pb2_grpc.add_KeywordServiceServicer_to_server(KeywordServicer(settings), server)
    return [SERVICE_NAME]
