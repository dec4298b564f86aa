"""What a query miner proposes (a Candidate per possible query) and the seeded draw that picks among them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass
class Candidate:
    """A possible query: `variants` are (variant, query) pairs; `pick_one` keeps one variant per candidate."""

    klass: str
    key: tuple[Any, ...]  # stable sort key: candidates are sorted before the seeded draw
    variants: list[tuple[str, str]]
    gold: list[dict[str, Any]]
    notes: dict[str, Any]
    pick_one: bool = False
    # A check too costly for every candidate, run only on drawn ones (e.g. uniqueness in the whole text).
    verify: Callable[[], bool] | None = field(default=None, compare=False, repr=False)


class GroundTruthMiner(Protocol):
    def handles(self, rel_path: str) -> bool: ...

    def mine(self, root: Path, rel_paths: Sequence[str]) -> dict[str, list[Candidate]]: ...


def draw(klass: str, cands: list[Candidate], seed: int, per_class: int) -> list[Candidate]:
    """Seeded, order-independent draw of up to per_class candidates that pass their `verify` check."""
    rng = random.Random(f"{seed}:{klass}")
    pool = sorted(cands, key=lambda c: c.key)
    rng.shuffle(pool)
    chosen: list[Candidate] = []
    for c in pool:
        if len(chosen) >= per_class:
            break
        if c.verify is None or c.verify():
            chosen.append(c)
    return sorted(chosen, key=lambda c: c.key)
