"""Same-length replacements: every byte but a newline becomes a space, so offsets and line numbers stay valid."""

from __future__ import annotations

import re
from collections.abc import Callable


def spaces(data: bytes) -> bytes:
    """Spaces for every byte but newlines, so line numbers stay."""
    return bytes(10 if b == 10 else 32 for b in data)


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
