"""Mines a query set with ground truth from a repository's own code (dev-queries.jsonl's schema and classes).

Miners sit behind `GroundTruthMiner`: each handles some files and proposes candidates per class; the sampler
picks per class with a seeded RNG, so the same repository and seed give the same file. `PythonAstMiner` reads
Python with `ast`; other languages can be added as miners (e.g. from the graph leg) without touching the rest.

Classes (Python miner):
  definition   `X` / `where is X defined` -> the def/class line; only names defined once in the repository.
  references   `who calls X` / `usages of X` -> call-site lines (Name/Attribute calls by name) of a name defined
               once, 2..30 sites, at least one outside the defining file.
  exact_match  `"<message>"` of a `raise E("...")` -> the message's line; only messages that occur once in the
               repository's text.
  impact       `what depends on module M` / `what breaks if I change M` -> each importing file (first import
               line); static imports only, relative ones resolved; 2..30 importers.
  concept      a docstring's first sentence (`literal`) and the same with the symbol's name tokens removed
               (`hard`) -> the definition's span.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codesearch.common.walker import is_hidden, walk
from codesearch.config import DEFAULT_MAX_FILE_BYTES
from codesearch.eval.mine_candidates import Candidate, GroundTruthMiner, draw
from codesearch.eval.mine_python import PythonAstMiner
from codesearch.eval.runfile import Query

CLASS_PREFIX = {
    "definition": "def",
    "references": "ref",
    "exact_match": "exact",
    "concept": "concept",
    "impact": "impact",
}
CLASS_ORDER = ("definition", "references", "exact_match", "concept", "impact")


def walk_repository(root: Path) -> list[str]:
    """Relative '/'-separated paths of the files the indexer would index (common/walker.py), sorted, without
    hidden ones: a query is mined only from code the index holds."""
    return [f.rel_path for f in walk(root, DEFAULT_MAX_FILE_BYTES).files if not is_hidden(f.rel_path)]


def default_miners() -> list[GroundTruthMiner]:
    return [PythonAstMiner()]


@dataclass
class MineReport:
    """Per class: candidates found and candidates written."""

    found: dict[str, int]
    chosen: dict[str, int]

    def format(self) -> str:
        lines = [f"{'class':<14}{'found':>8}{'chosen':>8}"]
        for k in self.found:
            lines.append(f"{k:<14}{self.found[k]:>8}{self.chosen.get(k, 0):>8}")
        return "\n".join(lines)


def mine_queries(
    root: Path, seed: int = 0, per_class: int = 50, miners: Iterable[GroundTruthMiner] | None = None
) -> tuple[list[Query], MineReport]:
    root = Path(root)
    paths = walk_repository(root)
    cands: dict[str, list[Candidate]] = defaultdict(list)
    for miner in miners if miners is not None else default_miners():
        for klass, cs in miner.mine(root, [p for p in paths if miner.handles(p)]).items():
            cands[klass] += cs
    classes = [k for k in CLASS_ORDER if k in cands] + sorted(k for k in cands if k not in CLASS_ORDER)
    queries: list[Query] = []
    report = MineReport(found={}, chosen={})
    for klass in classes:
        chosen = draw(klass, cands[klass], seed, per_class)
        report.found[klass] = len(cands[klass])
        report.chosen[klass] = len(chosen)
        rng = random.Random(f"{seed}:{klass}:variants")
        prefix = CLASS_PREFIX.get(klass, klass)
        for i, c in enumerate(chosen):
            variants = [rng.choice(c.variants)] if c.pick_one else c.variants
            for variant, text in variants:
                qid = f"{prefix}-{i:03d}" + ("" if c.pick_one or len(c.variants) == 1 else f"-{variant}")
                queries.append(Query(qid, klass, variant, text, c.gold, c.notes))
    return queries, report
