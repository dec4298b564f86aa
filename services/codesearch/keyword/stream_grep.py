"""StreamGrep: the trigram search over batches of files, each batch's matches sent as soon as it is verified.

A repository's snapshot is one shard. Its files (after the language and path filters) are searched in batches
that start small, so the first matches leave after a few files, and grow, so a large search makes few native
calls (each plans and compiles the pattern once). Between batches the budgets are checked: matching lines, the
client's wall time, and the call's deadline (stopped just before it, so the totals still reach the client).
Column ranges are found again on each returned line by RE2 (linear time, the syntax of Rust's regex crate).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import re2

from codesearch.common.errors import check_limit, check_query, invalid
from codesearch.config import (
    MAX_QUERY_CHARS,
    STREAM_DEFAULT_MAX_MATCHES,
    STREAM_MAX_MATCHES,
    STREAM_MAX_WALL_MS,
)
from codesearch.keyword.store import KeywordSnapshot
from codesearch.v1 import common_pb2, keyword_pb2

if TYPE_CHECKING:
    from codesearch._native import GrepMatch

FIRST_BATCH_FILES = 8  # the first answer waits for this many files: ~1 ms of verification on the stdlib
MAX_BATCH_FILES = 256  # batches double up to this: the stdlib's 601 files in ~8 native calls
DEADLINE_MARGIN_S = 0.05  # stop this long before the call's deadline: time to send the totals


@dataclass
class _Budget:
    max_matches: int
    wall_until: float  # monotonic; inf when the client set no time budget
    deadline_until: float  # monotonic; inf without a deadline

    def exceeded(self, lines: int) -> common_pb2.StopReason:
        """The stop reason the budgets give now, or STOP_REASON_UNSPECIFIED (false) to go on."""
        if lines >= self.max_matches:
            return common_pb2.STOP_REASON_MAX_MATCHES
        now = time.monotonic()
        if now >= self.deadline_until:
            return common_pb2.STOP_REASON_DEADLINE
        if now >= self.wall_until:
            return common_pb2.STOP_REASON_MAX_WALL_TIME
        return common_pb2.STOP_REASON_UNSPECIFIED


def check_request(request: keyword_pb2.StreamGrepRequest, time_remaining: float | None) -> _Budget:
    check_query(request.pattern, MAX_QUERY_CHARS, "pattern")
    max_matches = check_limit(
        request.max_matches, STREAM_DEFAULT_MAX_MATCHES, STREAM_MAX_MATCHES, "max_matches"
    )
    max_wall_ms = check_limit(request.max_wall_ms, 0, STREAM_MAX_WALL_MS, "max_wall_ms")
    now = time.monotonic()
    return _Budget(
        max_matches,
        now + max_wall_ms / 1000 if max_wall_ms else math.inf,
        now + time_remaining - DEADLINE_MARGIN_S if time_remaining is not None else math.inf,
    )


async def stream_grep(
    selected: list[tuple[str, KeywordSnapshot]], request: keyword_pb2.StreamGrepRequest, budget: _Budget
) -> AsyncIterator[keyword_pb2.StreamGrepResponse]:
    """Batches of file matches, then a last message with the stop reason and the statistics."""
    started = time.monotonic()
    is_regex = request.syntax == keyword_pb2.PATTERN_SYNTAX_REGEX
    ranges_of = range_finder(request.pattern, is_regex, request.case_sensitive)
    path_match = _path_matcher(request.pattern, is_regex, request.case_sensitive)
    stats = common_pb2.LegSearchStats(leg=common_pb2.LEG_TRIGRAM, shards_total=len(selected))
    scopes = []
    for repo, snap in selected:
        allowed = snap.allowed_ids(list(request.languages), request.path_glob)
        ids = list(range(len(snap.trigram_paths))) if allowed is None else allowed
        stats.files_considered += len(ids)
        scopes.append((repo, snap, ids))
    stop: common_pb2.StopReason = common_pb2.STOP_REASON_UNSPECIFIED
    for repo, snap, ids in scopes:
        stop = budget.exceeded(stats.lines_matched)
        if stop:
            break
        stats.shards_visited += 1
        size, start = FIRST_BATCH_FILES, 0
        while start < len(ids):
            batch = ids[start : start + size]
            start, size = start + len(batch), min(size * 2, MAX_BATCH_FILES)
            remaining = budget.max_matches - stats.lines_matched
            try:
                result = await asyncio.to_thread(
                    snap.trigram.search, request.pattern, is_regex, request.case_sensitive, remaining, batch
                )
            except ValueError as e:
                raise invalid(f"invalid {'regex' if is_regex else 'pattern'}: {e}") from None
            stats.files_loaded += result.candidate_files
            # Exact: the indexed size of every file this batch covered (a budget stop leaves the rest unsearched).
            stats.bytes_considered += sum(_file_bytes(snap, snap.trigram_paths[i]) for i in batch)
            files = _file_matches(repo, snap, result.matches, ranges_of, path_match, request.explain)
            if files:
                stats.files_matched += len(files)
                stats.lines_matched += sum(len(f.lines) for f in files)
                stats.matches += sum(max(1, len(line.ranges)) for f in files for line in f.lines)
                yield keyword_pb2.StreamGrepResponse(files=files)
            stop = budget.exceeded(stats.lines_matched)
            if stop:
                break
        if stop:
            break
    stats.duration_ms = (time.monotonic() - started) * 1000
    yield keyword_pb2.StreamGrepResponse(stop_reason=stop or common_pb2.STOP_REASON_COMPLETED, stats=stats)


def _file_bytes(snap: KeywordSnapshot, path: str) -> int:
    info = snap.files.get(path)
    if info is not None and info.bytes:
        return info.bytes
    content = snap.trigram.content(path)  # a generation written before sizes were recorded
    return len(content) if content is not None else 0


def _file_matches(
    repo: str,
    snap: KeywordSnapshot,
    matches: list[GrepMatch],  # best first
    ranges_of: Callable[[str], list[common_pb2.MatchRange]],
    path_match: Callable[[str], bool],
    explain: bool,
) -> list[common_pb2.FileMatch]:
    by_path: dict[str, common_pb2.FileMatch] = {}
    for m in matches:
        info = snap.files.get(m.path)
        fm = by_path.get(m.path)
        if fm is None:
            fm = by_path[m.path] = common_pb2.FileMatch(
                repository=repo, path=m.path, language=info.language if info else "", score=m.score
            )
        line = fm.lines.add(line_number=m.line, line=m.text, score=m.score)
        line.ranges.extend(ranges_of(m.text))
        if explain:
            line.explanation.CopyFrom(_explanation(m, path_match(m.path), info.lines if info else 0))
    for fm in by_path.values():
        fm.lines.sort(key=lambda line: line.line_number)
    return sorted(by_path.values(), key=lambda f: (-f.score, f.path))


def _explanation(m: GrepMatch, path_match: bool, file_lines: int) -> common_pb2.LineScoreExplanation:
    count = int(m.match_count)
    factors = [f"(1 + ln(1 + {count} match{'es' if count != 1 else ''}))"]
    factors += [name for name, on in (("whole word", m.whole_word), ("definition", m.definition_line)) if on]
    factors += ["path match"] if path_match else []
    return common_pb2.LineScoreExplanation(
        score=m.score,
        match_count=count,
        whole_word=m.whole_word,
        definition_line=m.definition_line,
        path_match=path_match,
        file_lines=file_lines,
        text=f"{m.score:.3f} = {' x '.join(factors)}, {file_lines}-line file",
    )


def _compile(pattern: str, is_regex: bool, case_sensitive: bool) -> re2._Regexp | None:
    """The pattern as RE2 reads it, as the native search does (multi-line, folded unless case-sensitive)."""
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.literal = not is_regex
    options.never_capture = True
    options.log_errors = False
    try:
        return re2.compile(f"(?m){pattern}" if is_regex else pattern, options=options)
    except re2.error:
        return None  # syntax RE2 lacks (the native search accepted it): lines keep no ranges


def range_finder(
    pattern: str, is_regex: bool, case_sensitive: bool
) -> Callable[[str], list[common_pb2.MatchRange]]:
    compiled = _compile(pattern, is_regex, case_sensitive)

    def ranges(line: str) -> list[common_pb2.MatchRange]:
        if compiled is None:
            return []
        return [
            common_pb2.MatchRange(start_column=m.start() + 1, end_column=m.end() + 1)
            for m in compiled.finditer(line)
            if m.end() > m.start()
        ]

    return ranges


def _path_matcher(pattern: str, is_regex: bool, case_sensitive: bool) -> Callable[[str], bool]:
    compiled = _compile(pattern, is_regex, case_sensitive)
    return lambda path: compiled is not None and compiled.search(path) is not None
