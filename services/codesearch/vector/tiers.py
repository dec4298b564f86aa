"""The vector leg's tiers, and which one answers a query.

- `static`: a model2vec model (vector/static_model.py; by default the distilled MiniLM, or with `+stdlib` the
  shipped delta of a model trained with MiniLM as teacher on the standard library, vector/static_delta.py).
  Every chunk gets its vector inside the index update (~2,000 chunks/s on 2 cores), so semantic search is
  complete when `codesearch index` returns.
- `transformer`: the configured sentence-transformers model (MiniLM by default, ~23 chunks/s). Its vectors
  fill in in the background, and it takes over a repository once every chunk of it has one (11 held-out
  polyglot repositories through `codesearch eval`, NDCG@10 `semantic` / `auto`: distilled static 0.744 / 0.862,
  `+stdlib` 0.796 / 0.855; on 9 of them MiniLM-int8 0.788 / 0.841 against distilled 0.723 / 0.859).

A query is answered from one tier for all the repositories it searches, so every score it returns comes from
one model: the best tier complete in all of them, else the tier with the most chunks embedded (partial).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

STATIC = "static"
TRANSFORMER = "transformer"
TIERS = (STATIC, TRANSFORMER)  # worst to best: a later complete tier answers before an earlier one
DEFAULT_TIERS = TIERS


def parse_tiers(value: str) -> tuple[str, ...]:
    """CODESEARCH_VECTOR_TIERS ("static,transformer", "static" or "transformer") in TIERS order."""
    names = {v.strip().lower() for v in value.split(",") if v.strip()}
    unknown = names - set(TIERS)
    if unknown or not names:
        raise ValueError(
            f"vector tiers must be a comma-separated subset of {', '.join(TIERS)}; got {value!r}"
        )
    return tuple(t for t in TIERS if t in names)


def answering_tier(progress: Sequence[Mapping[str, tuple[int, int]]], tiers: Sequence[str]) -> str:
    """The tier that answers over repositories whose per-tier progress is {tier: (embedded, total)}.

    The best tier complete in every repository; if none is, the one with the most chunks embedded overall
    (ties go to the better tier), so an answer is as complete as it can be."""
    if not tiers:
        raise ValueError("no vector tier configured")

    def complete(tier: str) -> bool:
        return all(p[tier][0] >= p[tier][1] for p in progress)

    for tier in reversed(tiers):
        if complete(tier):
            return tier
    return max(reversed(tiers), key=lambda t: sum(p[t][0] for p in progress))
