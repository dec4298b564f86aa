"""Query-focused snippets: the lines of a chunk that hold the query's words, not the chunk's first lines.

A class chunk that matched on one method's docstring used to show the class header; the reader (and the
orchestrator, which measures how many of the query's words the top hit holds) needs the matching lines.
"""

from __future__ import annotations

from codesearch.common.text import words

LEAD_LINES = 1  # lines shown above the first matching line (usually the def the docstring belongs to)


def focus(
    lines: list[str], first_line: int, query_words: set[str], window: int
) -> tuple[int, int, list[int]]:
    """(start, end) line indexes (0-based, end exclusive) of `window` lines holding the most distinct query words
    (starting just above the first matching line; the chunk's head when no line matches), and the absolute numbers
    of the lines that hold any query word."""
    if not query_words:
        return 0, min(len(lines), window), []
    per_line = [words(line) & query_words for line in lines]
    matching = [first_line + i for i, found in enumerate(per_line) if found]
    best_start, best = 0, 0
    for start in range(max(1, len(lines) - window + 1)):
        covered = len(set().union(*per_line[start : start + window]))
        if covered > best:
            best_start, best = start, covered
    if best:
        # Slide down to the first match in the window (the lines skipped hold none, so nothing is lost).
        first = next(i for i in range(best_start, len(lines)) if per_line[i])
        best_start = max(best_start, min(first - LEAD_LINES, len(lines) - window))
    return best_start, min(len(lines), best_start + window), matching
