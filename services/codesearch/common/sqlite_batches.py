"""Statements over many keys: `IN (...)` lists cut to what SQLite binds in one statement."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

# SQLite builds before 3.32 bind at most 999 parameters per statement; 500 leaves room for the statement's others.
IN_BATCH = 500


def in_batches(values: Sequence[T], size: int = IN_BATCH) -> Iterator[tuple[list[T], str]]:
    """Consecutive slices of `values` with their placeholders: (slice, "?,?,?") for `... IN ({marks})`."""
    for i in range(0, len(values), size):
        part = list(values[i : i + size])
        yield part, ",".join("?" * len(part))
