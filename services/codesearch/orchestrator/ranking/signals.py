"""Ranking signals applied to the fused list: what makes a candidate the answer beyond the legs' own scores.

`Params` holds every constant of the one ranking recipe (ranking/recipe.py composes the steps); `SHIPPED` is its
value for routed meaning and name questions. Each signal reads only the query and the candidates (location, symbol, snippet, fused score) plus the
definitions the graph leg found for the names the query holds, so the same code runs in the server and offline
over dumped leg lists (codesearch_lab/offline.py). Additive boosts are in units of the list's best fused
score, so they mean the same whatever the fusion's scale; penalties multiply.

Constants were chosen on the polyglot set's FIT repositories only (eval/polyglot.py FIT_REPOS), keyword +
graph legs, NDCG@10 macro; the figures beside them are fit-half measurements (held-out in services/RESULTS.md,
"What each ranking signal buys").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from codesearch.orchestrator.query import Query
from codesearch.orchestrator.query_terms import last_segment, split_identifier
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.orchestrator.ranking.path_kinds import SIGNALS_TEST_PATH
from codesearch.v1 import common_pb2, search_pb2


@dataclass(frozen=True)
class Params:
    """Every ranking constant, named. Figures: polyglot FIT repositories, NDCG@10 macro, keyword + graph legs,
    the shipped recipe (fit 0.850, held-out 0.832) against the same without the signal
    (codesearch_lab/offline.py --ablate, services/RESULTS.md). Where a value was chosen among several, the
    others' fit figures are given too."""

    # A chunk defining the queried name gains 1x the best fused score: the definition goes first. With the
    # definition leg already in the fusion semble's 3x was neutral (fit 0.828 with it, 0.830 without); 1x: fit
    # 0.850 vs 0.848 at 3x, 0.845 without. It is what finds definitions the graph does not parse
    # (a definition line in the snippet, a chunk's own symbol).
    definition_boost: float = 1.0
    # ... and half as much again in a file named after it (logger.py: Logger).
    definition_stem_factor: float = 1.5
    # A name inside a sentence gets the same boost (its half-boost `embedded_scale` went, losing nothing: offline
    # replay of the server's legs, 57 development repositories, +0.000 [-0.000, +0.001]; services/RESULTS.md).
    # Sentence queries: + 1.5 x the best score x the share of the query's words in the file name or folder, on
    # each file's best chunk only (every chunk of a matching file, header lines too, crowded the top: fit 0.839 ->
    # 0.843 once per file; then 1.0 / 1.5 / 2.0: 0.843 / 0.848 / 0.847). Without it fit 0.850 -> 0.824 (held-out
    # 0.832 -> 0.772): the largest single signal.
    stem_boost: float = 1.5
    stem_once_per_file: bool = True
    # The repository's own name in a question ("how does FastAPI run ...", "how chi resolves ...") names the
    # project, not a file: it is not a path word (chi.go, curl_*.c, fastapi/ matched it). Fit 0.877 -> 0.878,
    # held-out 0.860 -> 0.863 (trpc 0.871 -> 0.926, curl 0.713 -> 0.696).
    skip_repository_name: bool = True
    # The best chunk of each file gains 0.2 x the best score x the file's share of the top file's summed score.
    # Without it fit 0.850 -> 0.834; earlier 0.1: -0.009, 0.3: +0.004 but the stdlib paraphrase set 0.152 -> 0.142.
    coherence: float = 0.2
    # The vector leg's own votes per file: a file whose chunks the vector leg ranks in its first
    # vector_coherence_depth gains vector_coherence x the best score x its share of the top-voted file's sum of
    # 1 / (vector_coherence_k + rank), on its best chunk. Several neighbours of one file high in the meaning list
    # say the file is about the question even when BM25 spreads its words elsewhere (serde de/mod.rs, chi
    # context.go). Grid on the fit half, offline replay of the server's legs (codesearch_lab/offline.py), fit /
    # held-out NDCG@10, off 0.887 / 0.868: 0.2 depth 10 k 40 0.895 / 0.878; 0.3 depth 5 k 10 0.889 / 0.883;
    # 0.3 depth 10 k 0 0.895 / 0.886; 0.3 depth 10 k 10 0.897 / 0.884 (chosen: best fit); 0.3 depth 20 k 10
    # 0.891 / 0.885; 0.4 depth 10 k 10 0.897 / 0.885. 9 of 11 held-out repositories rose (lazy.nvim 0.791 ->
    # 0.858), none fell by more than 0.002.
    vector_coherence: float = 0.3
    vector_coherence_depth: int = 10
    vector_coherence_k: float = 10.0
    # Path penalties (multiply): tests, compat shims, examples, re-export barrels, .d.ts stubs, docs. Without them
    # fit 0.850 -> 0.831. Semble's values; 0.8 for tests scored higher on fit only while bats-core's
    # lib/test_functions.bash counted as a test (it is the library: see path_kinds.TEST_FILE).
    test_penalty: float = 0.3
    test_path: re.Pattern[str] = SIGNALS_TEST_PATH  # what counts as a test file
    # Generated, vendored, built or minified code (path_kinds.GENERATED_PATH): 1.0 here, the plain recipe demotes
    # it (ranking/recipe.py PLAIN).
    generated_penalty: float = 1.0
    compat_penalty: float = 0.3
    example_penalty: float = 0.3
    # Only for chunks that define nothing: a stdlib __init__.py holds real code (dev concept MRR@10 0.924 -> 0.953).
    reexport_penalty: float = 0.5
    # A bare name whose first hit defines it: the file of the definition's package that re-exports or declares it
    # (a barrel, mod.rs, __init__.py found by the keyword leg in the definition's folder or above; a header for a
    # definition in a source file) comes second (recipe.follow_reexport). Offline replay of the server's legs, 57
    # development repositories, paired: ALL +0.002 [+0.000, +0.004], symbol +0.012 [+0.001, +0.026]; barrels only
    # (no headers) symbol +0.011 [+0.000, +0.025]; nothing else moves (jinja2 StrictUndefined: __init__.py 19th -> 2nd).
    follow_reexports: bool = True
    typedef_penalty: float = 0.7
    # Markdown, YAML and other prose/config chunks (the chunker indexes them since #18): fit 0.817 -> 0.828 at 0.5
    # (0.7: 0.825, 0.3: 0.828); not when the query asks for documentation or configuration.
    docs_penalty: float = 0.5
    # Each further chunk of a file keeps 0.85 of the one before: without it fit 0.850 -> 0.849 (held-out 0.826). Semble's 0.5 scored
    # fit 0.824 but cost the stdlib paraphrase set 0.165 -> 0.143 MRR@10 (0.85: 0.152), whose answers are single
    # functions, often the second hit of a file.
    saturation_decay: float = 0.85
    saturation_free: int = 1  # chunks of a file before the decay starts (2: fit 0.811)
    max_per_file: int = 0  # chunks of a file kept at most (0: all; the plain recipe keeps 3)
    # ... but a question that is no long description (Query.is_specific) and no bare name asks which files, so each further
    # chunk of a file keeps 0.5 (semble's value; the paraphrases' reason for 0.85 does not apply to it). With score
    # fusion, offline replay of the server's legs, NDCG@10 fit / held-out: 0.85 0.914 / 0.896, 0.7 0.915 / 0.898,
    # 0.5 0.915 / 0.900, 0.3 and 0.1 the same as 0.5; every repository it moves rises (fit aeson +0.003, fastapi
    # +0.005; held-out six); the stdlib dev concept class (0.945) and the paraphrases (0.320) unchanged. A later
    # chunk of a file adds nothing where labels name files, so the fit half is nearly indifferent (0.9139 ->
    # 0.9147) and held-out was printed in the same grid: not a clean test of the choice.
    question_saturation_decay: float = 0.5
    # The keyword top hit holds this share of a sentence query's words: BM25 has settled it (ranking/adaptive.py's
    # rule); the signals stand aside. Stdlib dev concept MRR@10 0.871 without the gate, 0.946 with it (0.75: 0.947,
    # 0.6: 0.953), polyglot fit 0.836 without, 0.802 at 0.9, 0.791 at 0.75, 0.770 at 0.6 (keyword leg only).
    settled_coverage: float = 0.9


SHIPPED = Params()


def without_path_penalties(p: Params) -> Params:
    """`p` with every path penalty (recipe.path_penalty) off: for ablations and tests of the other signals."""
    return replace(
        p,
        generated_penalty=1.0,
        test_penalty=1.0,
        compat_penalty=1.0,
        example_penalty=1.0,
        reexport_penalty=1.0,
        typedef_penalty=1.0,
        docs_penalty=1.0,
    )


# The intents whose routed answers these signals rank: meaning questions and names. References, impact and exact
# matches are ranked by the plain recipe (recipe.PLAIN: the standard-library classes it was tuned on).
SIGNAL_INTENTS = frozenset(
    {search_pb2.INTENT_UNDERSTAND_CODE, search_pb2.INTENT_FIND_SIMILAR, search_pb2.INTENT_FIND_DEFINITION}
)

DEFINITION_KEYWORDS = (
    "class|module|defmodule|def|interface|struct|enum|trait|type|func|function|object|abstract class|data class"
    "|fn|fun|package|namespace|protocol|record|typedef|impl|extension|val|var|const|let|local function|macro"
)


@functools.lru_cache(maxsize=1024)
def _defines(name: str) -> re.Pattern[str]:
    """A line that defines `name` in most languages: a definition keyword, an optional namespace, the name."""
    ns = r"(?:[A-Za-z_][A-Za-z0-9_]*(?:\.|::))*"
    return re.compile(
        rf"(?:^|(?<=\s))(?:{DEFINITION_KEYWORDS})\s+{ns}{re.escape(name)}(?:\s|[<({{:\[;=]|$)", re.MULTILINE
    )


def _stem(path: str) -> str:
    return PurePosixPath(path).stem.lower()


def _stem_matches(stem: str, name: str) -> bool:
    flat = stem.replace("_", "").replace("-", "")
    return name in (stem, flat, stem.rstrip("s"), flat.rstrip("s"))


def applies(intent: int, keyword_coverage: float, p: Params = SHIPPED) -> bool:
    """Meaning and name questions, unless the keyword leg's top hit quotes the query word for word (a docstring
    or message typed back): BM25 has settled those, and boosts only move other files above it. A bare name is
    always "covered", so names are never settled that way."""
    if intent not in SIGNAL_INTENTS:
        return False
    return intent == search_pb2.INTENT_FIND_DEFINITION or keyword_coverage < p.settled_coverage


def _path(f: FusedHit) -> str:
    return f.hit.location.path


def _file(f: FusedHit) -> tuple[str, str]:
    return f.hit.location.repository, f.hit.location.path


def _add(f: FusedHit, name: str, amount: float) -> None:
    """Adds to the score and records it as the factor it came to (a hit's `boosts` explain its place)."""
    before = f.score
    f.score += amount
    f.boosts.append(common_pb2.Boost(name=name, factor=f.score / before if before > 0 else 0.0))


def _overlaps(f: FusedHit, loc: common_pb2.Location) -> bool:
    own = f.hit.location
    return own.path == loc.path and own.start_line <= loc.end_line and loc.start_line <= own.end_line


def defines_name(f: FusedHit, names: Iterable[str], definitions: Sequence[common_pb2.Location]) -> bool:
    """The candidate holds a definition of one of the names: the graph says so, its chunk is that symbol, or a
    definition line for it is in the snippet (languages the graph does not parse)."""
    if any(_overlaps(f, loc) for loc in definitions):
        return True
    sym = last_segment(f.hit.symbol) if f.hit.symbol else ""
    return any(sym == n or _defines(n).search(f.hit.snippet) for n in names)


def boost_definitions(
    cands: list[FusedHit], query: Query, definitions: Sequence[common_pb2.Location], p: Params = SHIPPED
) -> None:
    """Chunks that define a name the query asks about: + definition_boost x best score (x stem factor when the
    file is named after it); names inside a sentence as much as bare names, unless the sentence is a long
    description."""
    names = query.names
    if not names or not cands or not p.definition_boost:
        return
    unit = max(f.score for f in cands) * p.definition_boost
    if not query.is_symbol and query.is_specific:
        return
    tails = {last_segment(n).lower() for n in names}
    for f in cands:
        if defines_name(f, names, definitions):
            named = any(_stem_matches(_stem(_path(f)), t) for t in tails)
            _add(f, "defines_query_name", unit * (p.definition_stem_factor if named else 1.0))


def boost_path_words(cands: list[FusedHit], query: Query, p: Params = SHIPPED) -> None:
    """Sentence queries: chunks whose file name or folder holds the query's words gain stem_boost x best score x
    the share of words matched (prefixes of 3+ letters count: 'dependency' ~ 'dependencies'). The repository's
    own name does not count."""
    if query.is_symbol or not cands or query.is_specific or not p.stem_boost:
        return
    words = set(query.words)
    if p.skip_repository_name:
        words -= {_letters(f.hit.location.repository) for f in cands}
    if not words:
        return
    unit = max(f.score for f in cands) * p.stem_boost
    parts_of = {_path(f): _path_parts(_path(f)) for f in cands}
    boosted_files: set[tuple[str, str]] = set()
    for f in sorted(cands, key=lambda f: -f.score) if p.stem_once_per_file else cands:
        if p.stem_once_per_file and _file(f) in boosted_files:
            continue
        matched = _matched_words(words, parts_of[_path(f)])
        ratio = len(matched) / len(words)
        if matched:
            _add(f, "path_words", unit * ratio)
            boosted_files.add(_file(f))


def _letters(name: str) -> str:
    """'lazy.nvim' -> 'lazynvim': a repository name as a query word would spell it."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _path_parts(path: str) -> set[str]:
    """The words of a file's name and of its folder's name."""
    pure = PurePosixPath(path)
    parts = set(split_identifier(pure.stem))
    if pure.parent.name:
        parts.update(split_identifier(pure.parent.name))
    return parts


def _matched_words(words: set[str], parts: set[str]) -> set[str]:
    """The query words that name one of a path's parts: the same word, or one is a prefix of the other (3+
    letters: 'dependency' ~ 'dependencies')."""
    exact = words & parts
    return exact | {w for w in words - exact if any(_prefix_match(w, part) for part in parts)}


def _prefix_match(word: str, part: str) -> bool:
    short, long = (word, part) if len(word) <= len(part) else (part, word)
    return len(short) >= 3 and long.startswith(short)


def boost_file_coherence(cands: list[FusedHit], p: Params = SHIPPED) -> None:
    """A file with several good chunks lifts its best one by coherence x best score x its share of the top
    file's summed score."""
    _lift_files(cands, "file_coherence", p.coherence, lambda f: f.score)


def boost_vector_coherence(cands: list[FusedHit], p: Params = SHIPPED) -> None:
    """A file with several chunks high in the vector leg's own list lifts its best chunk (vector_coherence)."""

    def vote(f: FusedHit) -> float:
        ranks = [s.rank for s in f.leg_scores if s.leg == common_pb2.LEG_VECTOR]
        return sum(1.0 / (p.vector_coherence_k + r + 1) for r in ranks if r < p.vector_coherence_depth)

    _lift_files(cands, "vector_coherence", p.vector_coherence, vote)


def _lift_files(cands: list[FusedHit], name: str, weight: float, value: Callable[[FusedHit], float]) -> None:
    """Each file's best chunk gains weight x the best score x the file's summed `value` over its chunks / the
    largest such sum (files summing to 0 gain nothing)."""
    if not cands or not weight:
        return
    top = max(f.score for f in cands)
    if top <= 0:
        return
    total: dict[tuple[str, str], float] = {}
    best: dict[tuple[str, str], FusedHit] = {}
    for f in cands:
        path = _file(f)
        if path not in best or f.score > best[path].score:
            best[path] = f
        amount = value(f)
        if amount > 0:
            total[path] = total.get(path, 0.0) + amount
    if not total:
        return
    most = max(total.values())
    for path, amount in total.items():
        _add(best[path], name, top * weight * amount / most)
