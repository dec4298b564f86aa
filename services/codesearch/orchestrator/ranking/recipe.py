"""The one ranking recipe: from the fused list to the ranked answer, every step in order, its constants as data.

    coherence        each file's best chunk lifted by its other chunks' fused scores and the vector leg's votes
    definitions      chunks that define a name the query asks about
    path words       chunks whose file or folder the query's words name
    path penalties   tests, generated code, shims, examples, type stubs, prose
    saturation       each further chunk of a file keeps a share of the one before, perhaps up to a cap
    re-exports       a bare name's definition is followed by the file of its package that re-exports it

A step whose constant is 0 (or a penalty 1.0) does nothing. Two values of `Params` are shipped: `SHIPPED`
(signals.py) for routed meaning and name questions, `PLAIN` for the rest; `recipe_for` picks one. The server
(search.py) and the offline replay (codesearch_lab/offline.py) both call `rank`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from codesearch.common.languages import is_header
from codesearch.orchestrator.query import Query
from codesearch.orchestrator.ranking import signals
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.orchestrator.ranking.path_kinds import (
    COMPAT_DIR,
    DOCS_FILE,
    EXAMPLE_DIR,
    GENERATED_PATH,
    REEXPORT_FILES,
    TYPE_DECLARATION,
)
from codesearch.orchestrator.ranking.signals import SHIPPED, Params
from codesearch.v1 import common_pb2

# References, impact, exact matches, forced modes, the naive baseline and meaning questions the keyword leg has
# settled (signals.applies): no boosts; generated code x0.5 (rarely what anyone is looking for), tests x0.3 as in
# SHIPPED unless the query is about tests (tests mention everything they test; this recipe's own x0.8 went, losing
# nothing: `keyword` mode +0.000 [-0.001, +0.001] on the 57 development repositories, `auto` and the stdlib sets
# identical; without any test penalty `keyword` lost -0.004 [-0.007, -0.002]), a file's 2nd hit x0.85 and its 3rd x0.72, at most
# 3 (diversity without hiding a hot file; beyond three chunks of one file the rest add nothing a reader would
# not open anyway). The decay on the dev set's tune half (auto, concept MRR@10): 0.7 0.923, 0.85 0.931, none 0.929.
# Tests are what SHIPPED counts as tests (path_kinds.SIGNALS_TEST_PATH); the older regex of this recipe went, losing
# nothing: 57 development repositories `auto` identical, `keyword` +0.001 [+0.000, +0.002], stdlib sets identical.
PLAIN = replace(
    signals.without_path_penalties(SHIPPED),
    definition_boost=0.0,
    stem_boost=0.0,
    coherence=0.0,
    vector_coherence=0.0,
    follow_reexports=False,
    generated_penalty=0.5,
    test_penalty=SHIPPED.test_penalty,
    saturation_decay=0.85,
    question_saturation_decay=0.85,
    max_per_file=3,
)


def recipe_for(intent: int, routed: bool, keyword_coverage: float, shipped: Params = SHIPPED) -> Params:
    """`shipped` (SHIPPED, or an offline variant of it) for routed meaning and name questions the keyword leg has
    not settled (signals.applies), PLAIN otherwise."""
    return shipped if routed and signals.applies(intent, keyword_coverage, shipped) else PLAIN


def rank(
    cands: list[FusedHit], query: Query, definitions: Sequence[common_pb2.Location], p: Params = SHIPPED
) -> list[FusedHit]:
    """Every step in order (the module docstring); returns the candidates best first. `definitions`: where the
    definition leg found the names the query holds."""
    if not query.is_specific:
        signals.boost_file_coherence(cands, p)
        signals.boost_vector_coherence(cands, p)
    signals.boost_definitions(cands, query, definitions, p)
    signals.boost_path_words(cands, query, p)
    penalise_paths(cands, query, p)
    ranked = saturate(cands, saturation_decay(query, p), p)
    if p.follow_reexports:
        follow_reexport(ranked, query, definitions)
    return ranked


def follow_reexport(ranked: list[FusedHit], query: Query, definitions: Sequence[common_pb2.Location]) -> None:
    """A bare name whose first hit defines it: the re-exporting file of the same package moves to second place (in
    place). Re-exporting: a barrel (REEXPORT_FILES) or, for a definition in a source file, a header, in the
    definition's repository, in its folder or one above it (the nearest wins), that the keyword leg found (so it holds the name) and
    that does not define the name itself."""
    if (
        not query.is_symbol
        or len(ranked) < 2
        or not signals.defines_name(ranked[0], query.names, definitions)
    ):
        return
    top_repo, top_path = ranked[0].hit.location.repository, ranked[0].hit.location.path
    top_dir = PurePosixPath(top_path).parent
    nearest: tuple[int, int] | None = None  # (folder depth, place)
    for place, f in enumerate(ranked[1:], 1):
        path = f.hit.location.path
        folder = PurePosixPath(path).parent
        barrel = PurePosixPath(path).name in REEXPORT_FILES
        declares = is_header(path) and not is_header(top_path)
        if (
            f.hit.location.repository
            == top_repo  # its own package: not a namesake folder of another repository
            and path != top_path
            and (barrel or declares)
            and (folder == top_dir or folder in top_dir.parents)
            and common_pb2.LEG_KEYWORD in f.found_by
            and not signals.defines_name(f, query.names, definitions)
            and (nearest is None or len(folder.parts) > nearest[0])
        ):
            nearest = (len(folder.parts), place)
    if nearest is not None:
        moved, second = ranked.pop(nearest[1]), ranked[1]
        # Raised to the score of the hit it passes, so scores still read best first and the answer's margin (its
        # confidence) is the one the ranking gave.
        if 0 < moved.score < second.score:
            moved.scale("follows_definition", second.score / moved.score)
        ranked.insert(1, moved)


def path_penalty(path: str, p: Params = SHIPPED, defines: bool = False) -> float:
    """The product of the penalties the path earns, in a fixed order. `defines`: the chunk is a definition (a
    package's __init__.py that holds real code is not a re-export barrel)."""
    reexport = not defines and PurePosixPath(path).name in REEXPORT_FILES
    factor = 1.0
    for earned, penalty in (
        (GENERATED_PATH.search, p.generated_penalty),
        (p.test_path.search, p.test_penalty),
        (lambda _path: reexport, p.reexport_penalty),
        (COMPAT_DIR.search, p.compat_penalty),
        (EXAMPLE_DIR.search, p.example_penalty),
        (TYPE_DECLARATION.search, p.typedef_penalty),
        (DOCS_FILE.search, p.docs_penalty),
    ):
        if penalty != 1.0 and earned(path):
            factor *= penalty
    return factor


def penalise_paths(cands: list[FusedHit], query: Query, p: Params = SHIPPED) -> None:
    """Each candidate scaled by its path's penalties, less the ones the query asks for (docs, tests)."""
    for f in cands:
        path = f.hit.location.path
        factor = path_penalty(path, p, bool(f.hit.symbol))
        if query.wants_docs and p.docs_penalty != 1.0 and DOCS_FILE.search(path):
            factor /= p.docs_penalty
        if query.mentions_tests and p.test_penalty != 1.0 and p.test_path.search(path):
            factor /= p.test_penalty
        if factor != 1.0:
            f.scale("path_penalty", factor)


def by_score(hits: list[FusedHit]) -> None:
    """Best first; ties by place key, so equal scores always come out in the same order."""
    hits.sort(key=lambda f: (-f.score, f.key))


def saturate(cands: list[FusedHit], decay: float, p: Params = SHIPPED) -> list[FusedHit]:
    """Diminishing returns per file: each chunk of a file beyond the first saturation_free keeps `decay` of the
    score of the one before it (greedy, best first), and chunks past max_per_file are dropped; returns the
    re-sorted list."""
    by_score(cands)
    seen: dict[tuple[str, str], int] = {}
    kept = []
    for f in cands:
        file = (f.hit.location.repository, f.hit.location.path)
        n = seen.get(file, 0)
        seen[file] = n + 1
        if p.max_per_file and n >= p.max_per_file:
            continue
        if n >= p.saturation_free:
            f.scale("file_saturation", decay ** (n - p.saturation_free + 1))
        kept.append(f)
    by_score(kept)
    return kept


def saturation_decay(query: Query, p: Params = SHIPPED) -> float:
    """The per-file decay for this query: question_saturation_decay for a question that is neither a bare name
    nor a long description, saturation_decay otherwise."""
    if query.is_symbol or query.is_specific:
        return p.saturation_decay
    return p.question_saturation_decay
