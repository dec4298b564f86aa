"""What the cross-encoder reads for a candidate: a path + breadcrumb header, then the text trimmed around its focus lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from codesearch.common.text import subwords

BREADCRUMB_SEP = " > "  # reads like a path of enclosing definitions, and tokenises to one short piece
GAP_MARKER = "..."  # marks lines dropped between kept ones, so the model sees the text is not contiguous
FOCUS_WINDOW_LINES = 400  # lines farther than this from every focus line can never fit a 256-token budget
CHARS_PER_TOKEN = 3  # WordPiece on code averages ~3 characters a token; used only without a tokenizer
SPECIAL_TOKENS_PER_PAIR = 3  # [CLS] query [SEP] candidate [SEP]

CountTokens = Callable[[Sequence[str]], list[int]]


def approx_token_counts(lines: Sequence[str]) -> list[int]:
    """Token counts estimated from characters, for when no tokenizer is at hand."""
    return [len(line) // CHARS_PER_TOKEN + 1 for line in lines]


class Tokenizer(Protocol):
    """What is used of a Hugging Face tokenizer: a batched call that answers its "input_ids" per text."""

    def __call__(self, texts: list[str], /, *, add_special_tokens: bool) -> Any: ...


def tokenizer_counter(tokenizer: Tokenizer) -> CountTokens:
    """Exact counts from a Hugging Face tokenizer (one batched call for all lines)."""

    def count(lines: Sequence[str]) -> list[int]:
        if not lines:
            return []
        ids = tokenizer(list(lines), add_special_tokens=False)["input_ids"]
        return [len(x) for x in ids]

    return count


def header(path: str, breadcrumb: Sequence[str]) -> str:
    """First line: the file path; second (if any): the enclosing definitions."""
    parts = [path.strip()] if path.strip() else []
    crumbs = [c.strip() for c in breadcrumb if c.strip()]
    if crumbs:
        parts.append(BREADCRUMB_SEP.join(crumbs))
    return "\n".join(parts)


def trim_lines(text: str, focus_lines: Sequence[int], budget: int, count: CountTokens) -> str:
    """Keeps the lines nearest the focus lines (1-based) within `budget` tokens; without focus, the top lines.

    Lines are taken by distance to the nearest focus line (above before below on ties: the signature or the
    statement a match sits in is usually above it) and written back in their original order.
    """
    lines = text.splitlines()
    if not lines or budget <= 0:
        return ""
    focus = sorted({f - 1 for f in focus_lines if 1 <= f <= len(lines)})
    if focus:
        lo = max(0, focus[0] - FOCUS_WINDOW_LINES)
        hi = min(len(lines), focus[-1] + FOCUS_WINDOW_LINES + 1)
    else:
        lo, hi = 0, min(len(lines), budget + 1)  # every line costs at least one token
    window = list(range(lo, hi))
    costs = dict(zip(window, (c + 1 for c in count([lines[i] for i in window])), strict=True))  # +1: newline
    if sum(costs.values()) <= budget and lo == 0 and hi == len(lines):
        return text

    def distance(i: int) -> tuple[int, int]:
        if not focus:
            return (i, 0)
        d = min(abs(i - f) for f in focus)
        return (d, 0 if any(i + d == f for f in focus) else 1)

    kept: list[int] = []
    used = 0
    for i in sorted(window, key=distance):
        if used + costs[i] <= budget:
            kept.append(i)
            used += costs[i]
        elif not focus:
            break  # top lines only: stop at the first that does not fit, never skip ahead
    kept.sort()
    out: list[str] = []
    prev = -1
    for i in kept:
        if (prev >= 0 and i != prev + 1) or (prev < 0 and i > 0):
            out.append(GAP_MARKER)
        out.append(lines[i])
        prev = i
    if 0 <= prev < len(lines) - 1:
        out.append(GAP_MARKER)
    return "\n".join(out)


def candidate_text(
    query_tokens: int,
    path: str,
    breadcrumb: Sequence[str],
    text: str,
    focus_lines: Sequence[int],
    max_length: int,
    count: CountTokens = approx_token_counts,
) -> str:
    """The text the model reads: header, then as much of `text` around the focus as the pair budget allows."""
    head = header(path, breadcrumb)
    head_tokens = sum(count(head.splitlines())) + head.count("\n") + 1 if head else 0
    budget = max_length - SPECIAL_TOKENS_PER_PAIR - query_tokens - head_tokens
    body = trim_lines(text, focus_lines, budget, count)
    return f"{head}\n{body}" if head else body


def words(text: str) -> set[str]:
    """Lower-case sub-words of identifiers and prose (snake_case and camelCase split), minus stopwords."""
    return set(subwords(text))


def lexical_overlap(query: str, text: str) -> float:
    """Share of the query's words found in the text: a cheap lexical-match feature in [0, 1]."""
    q = words(query)
    if not q:
        return 0.0
    return len(q & words(text)) / len(q)
