"""Packing a context: candidate line ranges, best first, into per-file merged segments under an exact budget.

The budget counts the characters of code included: for each merged segment, its lines joined with '\\n'. Headers
and line numbers of the rendering are not counted. A candidate that does not fit is trimmed by whole lines (from
its end, or from its start for text that precedes a seed) or skipped; a later, smaller one may still fit.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIN_TRIMMED_LINES = 3  # a trimmed piece shorter than this is noise, not context
DEFAULT_MAX_SEGMENTS = 4  # options.max_segments_per_file = 0; more scattered pieces of one file read as noise
ELLIPSIS = "..."  # between non-contiguous segments of a file in the text rendering

Range = tuple[int, int]


@dataclass
class FileText:
    """A file's lines, with prefix sums of their lengths so the cost of any range is O(1)."""

    repository: str
    path: str
    language: str
    lines: list[str]
    prefix: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.prefix = [0]
        for line in self.lines:
            self.prefix.append(self.prefix[-1] + len(line))

    @classmethod
    def from_text(cls, repository: str, path: str, language: str, text: str) -> FileText:
        return cls(repository, path, language, text.split("\n") if text else [])

    def chars(self, start: int, end: int) -> int:
        """Characters of lines start..end (1-based, inclusive) joined with '\\n'."""
        return self.prefix[end] - self.prefix[start - 1] + (end - start)

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])


@dataclass
class Candidate:
    """A line range offered to the packer. stage: "seed", "neighbors", "breadcrumbs" or "graph"."""

    repository: str
    path: str
    start: int
    end: int
    score: float
    reason: str
    stage: str
    expanded_from: Range | None = None
    keep_tail: bool = False  # trim from the start (text that leads into a seed), not from the end
    seed_index: int = -1  # which Search hit it is, or was expanded from


def merge_ranges(ranges: list[Range]) -> list[Range]:
    """Sorted union of inclusive ranges; overlapping and adjacent ranges become one."""
    out: list[list[int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def ranges_chars(ranges: list[Range], text: FileText) -> int:
    return sum(text.chars(s, e) for s, e in ranges)


@dataclass
class PackedFile:
    text: FileText
    ranges: list[Range] = field(default_factory=list)
    best_score: float = float("-inf")
    first_order: int = 0  # when it entered the pack: ties in score keep that order


class Packer:
    """Greedy packer: offer candidates best first; each is merged, trimmed or refused under the budget."""

    def __init__(self, budget: int, max_segments: int, stage_caps: dict[str, int] | None = None) -> None:
        self.budget = budget
        self.max_segments = max_segments
        self.stage_caps = stage_caps or {}
        self.stage_used: dict[str, int] = {}
        self.used = 0
        self.files: dict[tuple[str, str], PackedFile] = {}

    def _allowance(self, stage: str) -> int:
        left = self.budget - self.used
        cap = self.stage_caps.get(stage)
        if cap is not None:
            left = min(left, cap - self.stage_used.get(stage, 0))
        return left

    def offer(self, cand: Candidate, text: FileText) -> Range | None:
        """Adds what fits of the candidate; returns the range actually taken (clipped), or None."""
        n = len(text.lines)
        start, end = max(1, cand.start), min(n, cand.end)
        if start > end:
            return None
        key = (cand.repository, cand.path)
        packed = self.files.get(key)
        current = packed.ranges if packed else []
        before = ranges_chars(current, text)
        allowance = self._allowance(cand.stage)

        def delta(s: int, e: int) -> int:
            return ranges_chars(merge_ranges([*current, (s, e)]), text) - before

        if _covered(current, start, end):
            return None
        if delta(start, end) <= allowance:
            s, e = start, end
        else:
            # Cost grows with the kept length, so bisect on it: largest piece that fits.
            length = end - start + 1
            lengths = range(1, length + 1)
            if cand.keep_tail:
                fits = bisect.bisect_right(lengths, allowance, key=lambda k: delta(end - k + 1, end))
                s, e = end - fits + 1, end
            else:
                fits = bisect.bisect_right(lengths, allowance, key=lambda k: delta(start, start + k - 1))
                s, e = start, start + fits - 1
            if fits < min(MIN_TRIMMED_LINES, length):
                return None
        merged = merge_ranges([*current, (s, e)])
        if len(merged) > self.max_segments:
            return None
        added = ranges_chars(merged, text) - before
        if added <= 0:
            return None
        if packed is None:
            packed = PackedFile(text, first_order=len(self.files))
            self.files[key] = packed
        packed.ranges = merged
        packed.best_score = max(packed.best_score, cand.score)
        self.used += added
        self.stage_used[cand.stage] = self.stage_used.get(cand.stage, 0) + added
        return s, e

    def ordered_files(self) -> list[PackedFile]:
        """Files by best score, then by the order they entered; segments are in line order."""
        return sorted(self.files.values(), key=lambda f: (-f.best_score, f.first_order))


def _covered(ranges: list[Range], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in ranges)


def render(files: list[PackedFile], show_repository: bool) -> str:
    """LLM-readable text: a header per file, numbered lines, '...' between non-contiguous segments."""
    out: list[str] = []
    for f in files:
        t = f.text
        where = f"{t.repository}:{t.path}" if show_repository else t.path
        out.append(f"### {where} ({t.language or 'text'})")
        width = len(str(f.ranges[-1][1])) if f.ranges else 1
        for i, (s, e) in enumerate(f.ranges):
            if i > 0 or s > 1:
                out.append(ELLIPSIS)
            for n in range(s, e + 1):
                out.append(f"{n:>{width}} | {t.lines[n - 1]}")
        if f.ranges and f.ranges[-1][1] < len(t.lines):
            out.append(ELLIPSIS)
        out.append("")
    return "\n".join(out)
