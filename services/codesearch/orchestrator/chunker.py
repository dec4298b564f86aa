"""Cuts a file into chunks: at definition boundaries where the graph's parser knows them, else at blank lines.

A definition that fits in MAX_DEFINITION_LINES is one chunk; a larger one is split into its header and its
children (methods), recursively, and a child-less giant into windows. Code between definitions (imports,
module-level statements) is cut into windows. A scrap too slight to be read alone (a closing brace, `<?php`,
`namespace X;`, a lone `@property`) joins a neighbour. Every chunk carries its breadcrumb (enclosing definitions).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from codesearch.common.parsing import PARSER_VERSION

WINDOW_LINES = 60  # about what a reader (or a 256-token model) takes in at once
WINDOW_OVERLAP = 5  # a little context carried across a window cut
BLANK_CUT_SLACK = 15  # look this many lines back from a window's end for a blank line to cut at
# A definition up to this size stays whole; a larger one is cut into its header and its methods, so the embedding
# model (which reads ~20-25 lines) sees each method. Measured on the stdlib (MRR@10, tune / check halves):
#   100: dense dev 0.471 / 0.543, paraphrases 0.169; BM25 concept 0.931 / 0.905; auto ALL 0.969 / 0.964
#    40: dense dev 0.527 / 0.592, paraphrases 0.232; BM25 concept 0.938 / 0.969; auto ALL 0.973 / 0.986
#    25: dense dev 0.530 / 0.593, paraphrases 0.236; BM25 concept 0.944 / 0.970; auto ALL 0.975 / 0.986
# 40 and 25 tie within noise; 40 makes fewer chunks (21,721 vs 22,728 for the stdlib).
MAX_DEFINITION_LINES = 40
# A chunk with fewer non-blank characters than this is a scrap (`}`, `end`, `<?php`, `namespace Illuminate\Queue;`,
# `@property`): no question is answered by it alone, and BM25's length normalisation ranked such one-liners high on
# a folder's words (laravel's `namespace ...\Connectors;` lines filled the top 10 for "queue connection resolution
# and connectors"); the stdlib had 2,900 of them in 21,721 chunks. Measured on fresh homes (README "Chunker version
# 3"): polyglot fit 0.898 -> 0.901, held-out 0.881 -> 0.882, stdlib paraphrases nDCG@10 0.296 -> 0.299 (`semantic`
# 0.296 -> 0.302), dev concept MRR@10 0.943 -> 0.946.
SLIGHT_CHARS = 40


# Bumped when the cutting rules change in a way the constants above do not show (2: a definition whose parent is
# in another file is cut at the top level; 3: so is one outside its parent's lines: chi's mux.go was 12 chunks,
# its 33 methods inside 60-line windows, and is 36, one per method; scraps join a neighbour).
CHUNKER_VERSION = 3


def chunking_fingerprint() -> str:
    """Part of every file's manifest hash: changing how files are cut, or how they are parsed, re-sends every file
    on the next run."""
    return (
        f"chunker:{CHUNKER_VERSION}:{MAX_DEFINITION_LINES}/{WINDOW_LINES}/{WINDOW_OVERLAP}/{BLANK_CUT_SLACK}"
        f"/{SLIGHT_CHARS}"
        f"/parser:{PARSER_VERSION}"
    )


class DefinitionLike(Protocol):
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    parent: str


@dataclass(frozen=True)
class ChunkSpan:
    start_line: int  # 1-based
    end_line: int  # inclusive
    breadcrumb: tuple[str, ...]  # enclosing definitions, outermost first
    symbol: str  # qualified name of the one definition the chunk holds, or ""


def chunk_lines(lines: list[str], definitions: list[DefinitionLike]) -> list[ChunkSpan]:
    """Chunks for a file given as lines (without newlines) and its definitions (may be empty)."""
    n = len(lines)
    if n == 0:
        return []
    defs = sorted(
        (d for d in definitions if 1 <= d.start_line <= d.end_line <= n),
        key=lambda d: (d.start_line, -d.end_line),
    )
    children: dict[str, list[DefinitionLike]] = {}
    spans_of: dict[str, list[tuple[int, int]]] = {}
    for d in defs:
        spans_of.setdefault(d.qualified_name, []).append((d.start_line, d.end_line))
    for d in defs:
        # A parent defined elsewhere (a Go method's type in another file, Terraform's `resource "type" "name"`), or
        # one that does not enclose it (a Go method below its `type Mux struct`), leaves the definition at the top
        # of this file: as a child of a parent that does not hold it, it was never cut out.
        encloses = any(a <= d.start_line and d.end_line <= b for a, b in spans_of.get(d.parent, []))
        children.setdefault(d.parent if encloses else "", []).append(d)
    spans = _cover(lines, 1, n, _outermost(children.get("", [])), children, ())
    return _join_scraps(lines, [s for s in spans if _has_text(lines, s.start_line, s.end_line)])


def _outermost(defs: list[DefinitionLike]) -> list[DefinitionLike]:
    """Drops definitions nested in an earlier one of the same list (parsers sometimes report both)."""
    out: list[DefinitionLike] = []
    for d in defs:
        if out and d.start_line <= out[-1].end_line:
            continue
        out.append(d)
    return out


def _cover(
    lines: list[str],
    start: int,
    end: int,
    defs: list[DefinitionLike],
    children: dict[str, list[DefinitionLike]],
    crumb: tuple[str, ...],
) -> list[ChunkSpan]:
    """Chunks covering [start, end] that contain the given sibling definitions."""
    spans: list[ChunkSpan] = []
    cursor = start
    for d in defs:
        if d.start_line < cursor or d.end_line > end:
            continue
        if cursor < d.start_line:
            spans += _windows(lines, cursor, d.start_line - 1, crumb, "")
        spans += _definition(lines, d, children, crumb)
        cursor = d.end_line + 1
    if cursor <= end:
        spans += _windows(lines, cursor, end, crumb, "")
    return spans


def _definition(
    lines: list[str], d: DefinitionLike, children: dict[str, list[DefinitionLike]], crumb: tuple[str, ...]
) -> list[ChunkSpan]:
    inner = (*crumb, d.name)
    if d.end_line - d.start_line + 1 <= MAX_DEFINITION_LINES:
        return [ChunkSpan(d.start_line, d.end_line, inner, d.qualified_name)]
    kids = _outermost([k for k in children.get(d.qualified_name, []) if k.start_line > d.start_line])
    if not kids:
        return _windows(lines, d.start_line, d.end_line, inner, d.qualified_name)
    # The header (signature, docstring, class attributes) before the first child is the definition's own chunk.
    header_end = kids[0].start_line - 1
    spans = _windows(lines, d.start_line, header_end, inner, d.qualified_name)
    return spans + _cover(lines, kids[0].start_line, d.end_line, kids, children, inner)


def _join_scraps(lines: list[str], spans: list[ChunkSpan]) -> list[ChunkSpan]:
    """Each scrap (_is_scrap) joins a neighbour, which keeps its breadcrumb and symbol: the chunk after it when it
    opens what follows (the file's first lines, a one-line declaration, lines directly above a definition such as
    a decorator), else the chunk before it (a closing brace ends the code above it)."""
    out: list[ChunkSpan] = []
    waiting: int | None = None  # first line of the scraps waiting for the next chunk
    for i, span in enumerate(spans):
        start = span.start_line if waiting is None else min(waiting, span.start_line)
        if not _is_scrap(lines, spans, i):
            out.append(replace(span, start_line=start))
            waiting = None
        elif out and not _opens_next(lines, spans, i):
            out[-1] = replace(out[-1], end_line=max(out[-1].end_line, span.end_line))
            waiting = None
        else:
            waiting = start
    if waiting is not None:  # scraps at the end: the last chunk takes them, or they are all there is
        if out:
            out[-1] = replace(out[-1], end_line=max(out[-1].end_line, spans[-1].end_line))
        else:
            out.append(replace(spans[-1], start_line=waiting))
    return out


def _is_scrap(lines: list[str], spans: list[ChunkSpan], i: int) -> bool:
    """Under SLIGHT_CHARS of text, and not a definition of its own: a window, or a one-line declaration that
    something follows (`namespace X;`, `__radd__ = __add__`, `def __len__(self): return 0`). Measured against
    one-line declarations ending in `;` only: the stdlib paraphrase set 0.299 -> 0.291 nDCG@10 (its one-line
    methods lost their neighbours), polyglot within 0.001. A small whole definition that nothing follows, or of
    several lines (`CREATE TABLE t (id INT);`), stays a chunk."""
    span = spans[i]
    if len(spans) == 1 or _has_text_chars(lines, span, SLIGHT_CHARS):
        return False
    return not span.symbol or (span.start_line == span.end_line and i + 1 < len(spans))


def _opens_next(lines: list[str], spans: list[ChunkSpan], i: int) -> bool:
    """A one-line declaration, or a window whose last line sits directly above a definition's first line."""
    span = spans[i]
    if span.symbol:
        return True
    after = spans[i + 1] if i + 1 < len(spans) else None
    return (
        after is not None
        and bool(after.symbol)
        and after.start_line == span.end_line + 1
        and bool(lines[span.end_line - 1].strip())
    )


def _has_text_chars(lines: list[str], span: ChunkSpan, at_least: int) -> bool:
    """Whether the span holds at least this many non-space characters; stops counting once it does (most spans
    hold far more: chunk_lines over the standard library 0.24 -> 0.15 s, chunks byte-identical)."""
    count = 0
    for line in lines[span.start_line - 1 : span.end_line]:
        count += len("".join(line.split()))
        if count >= at_least:
            return True
    return False


def _windows(lines: list[str], start: int, end: int, crumb: tuple[str, ...], symbol: str) -> list[ChunkSpan]:
    """Windows of about WINDOW_LINES over [start, end], cut at a blank line where one is near."""
    spans: list[ChunkSpan] = []
    s = start
    while s <= end:
        e = min(end, s + WINDOW_LINES - 1)
        if e < end:
            for cut in range(e, max(s, e - BLANK_CUT_SLACK), -1):
                if not lines[cut - 1].strip():
                    e = cut
                    break
        spans.append(ChunkSpan(s, e, crumb, symbol))
        if e >= end:
            break
        # A cut at a blank line needs no overlap; a hard cut repeats a few lines so nothing loses its context.
        nxt = e + 1 if not lines[e - 1].strip() else e + 1 - WINDOW_OVERLAP
        s = max(nxt, s + 1)
    return spans


def _has_text(lines: list[str], start: int, end: int) -> bool:
    return any(lines[i - 1].strip() for i in range(start, end + 1))
