"""A learnt re-scorer over the routed answer's head, measured against the hand recipe (an eval tool: nothing here
is in the query path, because it did not beat the hand recipe on held-out repositories: notes/15.md).

Each query of a polyglot leg dump is ranked the server's way (eval/offline.py, routed); the first HEAD candidates
get per-candidate features that hold across repositories (their place and normalised score before and after the
signals, each leg's rank and normalised score, each signal's factor, file-level aggregates, path-word and snippet
matches, penalties). A logistic model (sklearn) learns "this is the first chunk of its file that answers" (almost
every polyglot target is a whole file, so a second chunk of a file gains nothing) and re-orders the head.
Selected by cross-validation grouped by repository (leave one FIT repository out), reported on the held-out
repositories by repository and category beside the hand recipe:

  python -m codesearch.eval.learnt_rank legs.jsonl --polyglot ../shared/eval/polyglot
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codesearch.eval.offline import ROUTED, QueryLegs, keyword_hits, load_legs, rank_one
from codesearch.eval.polyglot import (
    CATEGORIES,
    FIT_REPOS,
    HELD_OUT_REPOS,
    PolyglotSet,
    load_set,
    result_matches,
    summarize,
)
from codesearch.eval.polyglot import _norm as norm_path
from codesearch.orchestrator.query_terms import content_words, query_names, split_identifier
from codesearch.orchestrator.ranking import adaptive, path_kinds, signals
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.orchestrator.router import classify
from codesearch.v1 import common_pb2

HEAD = 30  # candidates re-ordered: the best order of the hand recipe's first 30 reaches NDCG@10 0.98 on both halves
MISSING_RANK = 60.0  # a leg's rank for a candidate that leg did not return (its lists are 50 long)
FLOOR = 1e-4  # the smallest relative score whose logarithm is taken
C_GRID = (0.01, 0.1, 1.0)  # sklearn LogisticRegression's inverse regularisation, chosen by grouped CV
LEG_NAMES = {
    common_pb2.LEG_KEYWORD: "keyword",
    common_pb2.LEG_VECTOR: "vector",
    common_pb2.LEG_DEFINITION: "definition",
    common_pb2.LEG_REFERENCES: "references",
}
BOOST_NAMES = (
    "defines_query_name",
    "path_words",
    "file_coherence",
    "vector_coherence",
    "path_penalty",
    "file_saturation",
    "centrality",
)
FEATURES = (
    "log_rank",  # ln(1 + the hand recipe's place)
    "score",  # the hand score / the head's best
    "log_score",
    "fused",  # the fused (RRF) score before the signals / the head's best
    "log_fused",
    "fused_rank",
    *(f"{leg}_{what}" for leg in LEG_NAMES.values() for what in ("rank", "found", "score")),
    "vector_cosine",  # the vector leg's own score: comparable across repositories
    "legs",  # how many legs found it
    *(f"boost_{name}" for name in BOOST_NAMES),  # ln of the factor each signal gave it (0: none)
    "file_chunks",  # the file's chunks in the head
    "file_best_rank",
    "file_order",  # 0 for the file's best-ranked chunk
    "file_first",
    "file_share",  # the file's summed score / the best file's
    # the same file over the whole fused list, not only the head: its chunks, its summed score / the best file's,
    # and its chunks the keyword and vector legs found (CV on FIT 0.886 -> 0.893 with these four)
    "list_file_chunks",
    "list_file_share",
    "list_file_keyword",
    "list_file_vector",
    "path_words",  # share of the query's words in the file name or folder (signals.py's matching)
    "snippet_words",  # share of the query's words in the snippet
    "symbol_words",  # share of the query's words among the chunk's symbol parts
    "has_symbol",
    "defines",  # the chunk defines a name the query holds
    "log_lines",
    "depth",  # folders above the file
    "docs",
    "test",
)


@dataclass
class QueryHead:
    qid: str
    rows: list[list[float]]  # one FEATURES vector per head candidate, in the hand recipe's order
    results: list[dict[str, Any]]  # the hand recipe's results: the head, then the next 10
    reordered: bool  # the signals ranked this answer (the learnt stage would stand aside otherwise)


def _rel(value: float, best: float) -> float:
    return value / best if best > 0 else 0.0


def _share(words: set[str], found: set[str] | str) -> float:
    if not words:
        return 0.0
    return sum(1 for w in words if w in found) / len(words)


def _whole_list_files(ranked: Sequence[FusedHit]) -> dict[str, list[float]]:
    """Per file of the whole fused list: [chunks, summed score, chunks the keyword leg found, ... the vector leg]."""
    out: dict[str, list[float]] = {}
    for f in ranked:
        legs = {s.leg for s in f.leg_scores}
        w = out.setdefault(f.hit.location.path, [0.0, 0.0, 0.0, 0.0])
        w[0] += 1
        w[1] += f.score
        w[2] += common_pb2.LEG_KEYWORD in legs
        w[3] += common_pb2.LEG_VECTOR in legs
    return out


def candidate_features(ranked: Sequence[FusedHit], query: str) -> list[list[float]]:
    """The FEATURES of each of the first HEAD candidates of a hand-ranked answer."""
    head = list(ranked[:HEAD])
    if not head:
        return []
    words = content_words(query)
    names = query_names(query)
    fused = [f.score / math.prod(b.factor for b in f.boosts if b.factor > 0) for f in head]
    fused_place = {i: r for r, i in enumerate(sorted(range(len(head)), key=lambda i: -fused[i]))}
    leg_best: dict[int, float] = {}
    files: dict[str, list[int]] = {}
    for i, f in enumerate(head):
        for s in f.leg_scores:
            leg_best[s.leg] = max(leg_best.get(s.leg, 0.0), s.score)
        files.setdefault(f.hit.location.path, []).append(i)
    file_sum = {p: sum(head[i].score for i in idx) for p, idx in files.items()}
    best_file = max(file_sum.values())
    whole = _whole_list_files(ranked)
    best_whole = max(w[1] for w in whole.values())
    top, top_fused = max(head[0].score, 0.0), max(fused)
    rows = []
    for i, f in enumerate(head):
        loc = f.hit.location
        legs = {s.leg: s for s in f.leg_scores}
        per_leg: list[float] = []
        for leg in LEG_NAMES:
            found = legs.get(leg)
            per_leg += [float(found.rank) if found else MISSING_RANK, float(found is not None)]
            per_leg.append(_rel(found.score, leg_best[leg]) if found else 0.0)
        factors = dict.fromkeys(BOOST_NAMES, 0.0)
        for b in f.boosts:
            if b.name in factors and b.factor > 0:
                factors[b.name] += math.log(b.factor)
        same_file = files[loc.path]
        vector = legs.get(common_pb2.LEG_VECTOR)
        symbol_parts = set(split_identifier(f.hit.symbol)) if f.hit.symbol else set()
        path_words = signals._matched_words(words, signals._path_parts(loc.path), signals.SHIPPED.stem_common)
        rows.append(
            [
                math.log1p(i),
                _rel(f.score, top),
                math.log(max(_rel(f.score, top), FLOOR)),
                _rel(fused[i], top_fused),
                math.log(max(_rel(fused[i], top_fused), FLOOR)),
                float(fused_place[i]),
                *per_leg,
                vector.score if vector else 0.0,
                float(len(f.found_by)),
                *factors.values(),
                float(len(same_file)),
                float(same_file[0]),
                float(same_file.index(i)),
                float(same_file[0] == i),
                _rel(file_sum[loc.path], best_file),
                whole[loc.path][0],
                _rel(whole[loc.path][1], best_whole),
                whole[loc.path][2],
                whole[loc.path][3],
                len(path_words) / len(words) if words else 0.0,
                _share(words, f.hit.snippet.lower()),
                _share(words, symbol_parts),
                float(bool(f.hit.symbol)),
                float(bool(names) and signals.defines_name(f, names, [])),
                math.log1p(max(0, loc.end_line - loc.start_line + 1)),
                float(loc.path.count("/")),
                float(bool(path_kinds.DOCS_FILE.search(loc.path))),
                float(bool(path_kinds.TEST_FILE.search(loc.path) or path_kinds.TEST_DIR.search(loc.path))),
            ]
        )
    return rows


def _result(f: FusedHit) -> dict[str, Any]:
    loc = f.hit.location
    return {"path": loc.path, "start_line": loc.start_line, "end_line": loc.end_line}


def head_of(q: QueryLegs) -> QueryHead:
    ranked = rank_one(q, ROUTED)
    coverage = adaptive.keyword_coverage(q.query, keyword_hits(q, ROUTED))
    reordered = bool(ranked) and signals.applies(classify(q.query).intent, coverage)
    return QueryHead(
        q.qid, candidate_features(ranked, q.query), [_result(f) for f in ranked[: HEAD + 10]], reordered
    )


def first_in_file_labels(head: QueryHead, pset: PolyglotSet) -> list[float]:
    """1 for the best-ranked chunk of each file that matches a target, else 0."""
    q = next(p for p in pset.queries if p.qid == head.qid)
    labels, seen = [], set()
    for res in head.results[: len(head.rows)]:
        path = norm_path(res["path"], q.repo)
        hit = path not in seen and any(result_matches(res, t, path) for t in q.targets)
        labels.append(float(hit))
        if hit:
            seen.add(path)
    return labels


class LearntRanker:
    """Standardised FEATURES, then a pointwise logistic model; orders a head by its score."""

    def __init__(self, c: float) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))

    def fit(self, heads: Sequence[QueryHead], pset: PolyglotSet) -> LearntRanker:
        used = [h for h in heads if h.reordered and h.rows]
        x = [row for h in used for row in h.rows]
        y = [label for h in used for label in first_in_file_labels(h, pset)]
        self.model.fit(x, y)
        return self

    def order(self, head: QueryHead) -> list[dict[str, Any]]:
        """The head re-ordered by the model's score, then the hand recipe's tail."""
        if not (head.reordered and head.rows):
            return head.results
        scores = self.model.decision_function(head.rows)
        n = len(head.rows)
        order = sorted(range(n), key=lambda i: -scores[i])
        return [head.results[i] for i in order] + head.results[n:]


def hand_run(heads: Sequence[QueryHead]) -> dict[str, dict[str, Any]]:
    return {h.qid: {"results": h.results} for h in heads}


def cross_validated_run(heads: Sequence[QueryHead], pset: PolyglotSet, c: float) -> dict[str, dict[str, Any]]:
    """Each FIT repository's answers re-ordered by a model fitted on the other FIT repositories."""
    repo = {q.qid: q.repo for q in pset.queries}
    run = hand_run(heads)
    for left_out in FIT_REPOS:
        train = [h for h in heads if repo[h.qid] in FIT_REPOS and repo[h.qid] != left_out]
        model = LearntRanker(c).fit(train, pset)
        for h in heads:
            if repo[h.qid] == left_out:
                run[h.qid] = {"results": model.order(h)}
    return run


def fitted_run(heads: Sequence[QueryHead], pset: PolyglotSet, c: float) -> dict[str, dict[str, Any]]:
    """Every answer re-ordered by a model fitted on all FIT repositories."""
    repo = {q.qid: q.repo for q in pset.queries}
    model = LearntRanker(c).fit([h for h in heads if repo[h.qid] in FIT_REPOS], pset)
    return {h.qid: {"results": model.order(h)} for h in heads}


def _cell(summary: Mapping[str, Mapping[str, Any]], row: str) -> str:
    value = (summary.get(row) or {}).get("ndcg10")
    return "-" if value is None else f"{value:.3f}"


def report(heads: Sequence[QueryHead], pset: PolyglotSet) -> str:
    """NDCG@10 macro over repositories: the hand recipe, then per C the grouped-CV figure on FIT and the held-out
    figure of the model fitted on all FIT repositories; per held-out repository for the C that CV chooses."""
    hand = summarize(pset, hand_run(heads))
    rows = [("hand recipe", hand, hand)]
    for c in C_GRID:
        cv = summarize(pset, cross_validated_run(heads, pset, c))
        rows.append((f"learnt C={c}", cv, summarize(pset, fitted_run(heads, pset, c))))
    chosen = max(rows[1:], key=lambda r: r[1]["split:fit"]["ndcg10"])
    cats = ("ALL", *CATEGORIES)

    def cells(summary: Mapping[str, Mapping[str, Any]], split: str) -> str:
        return " | ".join(
            _cell(summary, f"split:{split}" if c == "ALL" else f"split:{split}/{c}") for c in cats
        )

    lines = [
        "NDCG@10 | " + " | ".join(f"fit {c} (CV)" for c in cats) + " | " + " | ".join(cats) + " (held-out)"
    ]
    lines += [f"{name} | {cells(cv, 'fit')} | {cells(held, 'held-out')}" for name, cv, held in rows]
    lines.append(f"chosen by grouped CV on FIT: {chosen[0]}; held-out per repository, hand -> learnt:")
    lines += [
        f"  {r:<20} {_cell(hand, f'repo:{r}')} -> {_cell(chosen[2], f'repo:{r}')}" for r in HELD_OUT_REPOS
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("legs", help="legs.jsonl from codesearch eval --polyglot --dump-legs")
    ap.add_argument("--polyglot", required=True, help="the polyglot folder")
    args = ap.parse_args(argv)
    pset = load_set(args.polyglot)
    print(report([head_of(q) for q in load_legs(args.legs)], pset))
    return 0


if __name__ == "__main__":
    sys.exit(main())
