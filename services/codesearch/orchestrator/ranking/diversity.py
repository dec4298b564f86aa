"""Diminishing returns per file: a file's later chunks count for less, and beyond a few for nothing."""

from __future__ import annotations

from codesearch.orchestrator.ranking.fusion import FusedHit

# The 2nd hit of a file keeps 85%, the 3rd 72%: diversity without hiding a hot file. Measured on the tune half
# (auto, MRR@10 concept): 0.7 → 0.923, 0.85 → 0.931, no decay → 0.929.
PER_FILE_DECAY = 0.85
MAX_PER_FILE = 3  # beyond this many chunks of one file, the rest add nothing a reader would not open anyway


def by_score(hits: list[FusedHit]) -> None:
    """Best first; ties by place key, so equal scores always come out in the same order."""
    hits.sort(key=lambda f: (-f.score, f.key))


def per_file_decay(hits: list[FusedHit]) -> list[FusedHit]:
    """Ranks by score, decays each file's later hits, drops those past MAX_PER_FILE; returns the new order."""
    by_score(hits)
    per_file: dict[tuple[str, str], int] = {}
    kept = []
    for f in hits:
        loc = f.hit.location
        n = per_file.get((loc.repository, loc.path), 0)
        per_file[(loc.repository, loc.path)] = n + 1
        if n >= MAX_PER_FILE:
            continue
        if n:
            f.scale("file_decay", PER_FILE_DECAY**n)
        kept.append(f)
    by_score(kept)
    return kept
