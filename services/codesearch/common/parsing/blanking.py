"""Same-length replacements: every byte but a newline becomes a space, so offsets and line numbers stay valid."""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Callable, Sequence

_DIRECTIVE_LINES = re.compile(rb"(?m)^[ \t]*#(?:[^\n\\]|\\.|\\\n)*")  # a `#` line with its continuation lines


def directive_spans(source: bytes) -> list[tuple[int, int]]:
    """(start, end) of every `#` directive of `source`, continuation lines included, in source order."""
    return [m.span() for m in _DIRECTIVE_LINES.finditer(source)] if b"#" in source else []


def inside(spans: Sequence[tuple[int, int]], at: int) -> bool:
    """Whether offset `at` lies in one of `spans` (sorted, disjoint)."""
    i = bisect.bisect_right(spans, (at, sys.maxsize)) - 1
    return i >= 0 and at < spans[i][1]


_TO_SPACES = bytes(
    10 if b == 10 else 32 for b in range(256)
)  # a translation table: newline stays, all else ` `


def spaces(data: bytes) -> bytes:
    """Spaces for every byte but newlines, so line numbers stay."""
    return data.translate(_TO_SPACES)


def blank(match: re.Match[bytes]) -> bytes:
    return spaces(match.group(0))


def blank_group(group: int) -> Callable[[re.Match[bytes]], bytes]:
    """Group `group` of the match becomes spaces, the rest stays."""

    def blank_it(match: re.Match[bytes]) -> bytes:
        start, end = match.span(group)
        whole = match.group(0)
        base = match.start(0)
        return whole[: start - base] + spaces(whole[start - base : end - base]) + whole[end - base :]

    return blank_it


def underscore_group(group: int) -> Callable[[re.Match[bytes]], bytes]:
    """Group `group` of the match becomes `_`s (an identifier of the same length), the rest stays."""

    def underscores(match: re.Match[bytes]) -> bytes:
        start, end = match.start(group) - match.start(0), match.end(group) - match.start(0)
        whole = match.group(0)
        return whole[:start] + b"_" * (end - start) + whole[end:]

    return underscores
