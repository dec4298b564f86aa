"""Re-score ranking variants offline over a leg dump (legs.jsonl from `codesearch eval --polyglot --dump-legs`).

The same fusion (orchestrator/fusion.py, the native RRF) and the same signals (orchestrator/signals.py) as the
server, fed with each leg's recorded answer, so a variant of weights or boosts is scored over the 417 queries in
seconds without asking the server again:

  python -m codesearch.eval.offline legs.jsonl --polyglot ../shared/eval/polyglot [--variants NAME ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseDict

from codesearch.eval.polyglot import CATEGORIES, PolyglotSet, load_set, summarize
from codesearch.orchestrator.fanout import reference_hit, symbol_hit
from codesearch.orchestrator.plan import keyword_path_weight, routed_weights
from codesearch.orchestrator.ranking import adaptive, boosts, diversity, fusion, penalties, signals
from codesearch.orchestrator.ranking.penalties import TEST_WORDS
from codesearch.orchestrator.ranking.signals import Params
from codesearch.orchestrator.router import DIRECT_CONFIDENCE, classify
from codesearch.v1 import common_pb2, graph_pb2, search_pb2


@dataclass(frozen=True)
class Variant:
    """One ranking recipe: leg weights (0 drops a leg), the RRF k, and the signals' constants (None: none)."""

    name: str
    weights: Mapping[str, float] = field(default_factory=lambda: {"keyword": 1.0})
    k: float = 60.0
    params: Params | None = signals.SHIPPED
    depth: int = 50
    routed: bool = False  # True: each query's leg weights as the router gives them (weights then unused)
    rrf_scores: bool = (
        False  # True: one list too is scored 1/(k + rank) (the server keeps a lone leg's scores)
    )
    question_paths: bool = (
        True  # a routed question's keyword leg counts path words (plan.keyword_path_weight)
    )
    score_fusion: bool = True  # routed meaning questions fuse the legs' scores (fusion.fuses_scores)


# What the server does: the router's weights per query, its default preset's RRF k.
ROUTED = Variant("routed", routed=True, k=40.0)


def _hit(d: Mapping[str, Any]) -> common_pb2.Hit:
    return ParseDict(dict(d), common_pb2.Hit(), ignore_unknown_fields=True)


def _definition_hit(d: Mapping[str, Any], leg: int, rank: int) -> common_pb2.Hit:
    return symbol_hit(ParseDict(dict(d), graph_pb2.Symbol(), ignore_unknown_fields=True), leg, rank)


def _reference_hit(d: Mapping[str, Any], rank: int) -> common_pb2.Hit:
    return reference_hit(ParseDict(dict(d), graph_pb2.Reference(), ignore_unknown_fields=True), rank)


@dataclass
class QueryLegs:
    """One query's recorded leg answers, as protos."""

    qid: str
    query: str
    keyword: list[common_pb2.Hit]
    vector: list[common_pb2.Hit]
    definitions: list[common_pb2.Hit]
    references: list[common_pb2.Hit]
    # The keyword leg asked with path words (plan.QUESTION_PATH_WEIGHT); empty in dumps made before it.
    keyword_paths: list[common_pb2.Hit] = field(default_factory=list)
    # (path, start_line, end_line) -> the graph's centrality, for structural questions (boosts.py)
    centrality: dict[tuple[str, int, int], float] = field(default_factory=dict)


def load_legs(path: str | Path) -> list[QueryLegs]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            legs = rec["legs"]
            defs = [d for hits in legs.get("definition", {}).values() for d in hits]
            refs = [r for hits in legs.get("callers", {}).values() for r in hits]
            out.append(
                QueryLegs(
                    qid=rec["query_id"],
                    query=rec["query"],
                    keyword=[_hit(h) for h in legs.get("keyword", [])],
                    vector=[_hit(h) for h in legs.get("vector", [])],
                    definitions=[
                        _definition_hit(d, common_pb2.LEG_DEFINITION, i) for i, d in enumerate(defs)
                    ],
                    references=[_reference_hit(r, i) for i, r in enumerate(refs)],
                    keyword_paths=[_hit(h) for h in legs.get("keyword_paths", [])],
                    centrality={(p, a, b): c for p, a, b, c in legs.get("centrality", [])},
                )
            )
    return out


def keyword_hits(q: QueryLegs, v: Variant) -> list[common_pb2.Hit]:
    """The keyword leg's answer as the server asks it for this query (questions count path words)."""
    if v.routed and v.question_paths and q.keyword_paths and keyword_path_weight(classify(q.query)) > 0:
        return q.keyword_paths
    return q.keyword


def rank_one(q: QueryLegs, v: Variant) -> list[fusion.FusedHit]:
    keyword = keyword_hits(q, v)
    available = {
        "keyword": (common_pb2.LEG_KEYWORD, keyword),
        "vector": (common_pb2.LEG_VECTOR, q.vector),
        "definition": (common_pb2.LEG_DEFINITION, q.definitions),
        "references": (common_pb2.LEG_REFERENCES, q.references),
    }
    weights = dict(v.weights)
    if v.routed:
        route = classify(q.query)
        by_leg = routed_weights(route, search_pb2.PRESET_DEFAULT, q.query)
        if route.confidence >= DIRECT_CONFIDENCE and by_leg:  # the direct path, as plan.py
            top = max(by_leg, key=lambda leg: by_leg[leg])
            by_leg = {top: by_leg[top]} if any(h for leg, h in available.values() if leg == top) else by_leg
        weights = {name: by_leg.get(leg, 0.0) for name, (leg, _hits) in available.items()}
        if adaptive.decisive(
            route.intent, q.query, keyword
        ):  # the server's adaptive cancel (search.py _adapt)
            weights["vector"] *= adaptive.DECISIVE_VECTOR_FACTOR
    lists: list[fusion.RankedList] = [
        (available[name][0], w, available[name][1][: v.depth])
        for name, w in sorted(weights.items(), key=lambda kv: -kv[1])
        if w > 0 and available[name][1]
    ]
    if not lists:
        return []
    if v.rrf_scores and len(lists) == 1:
        lists.append((common_pb2.LEG_VECTOR, 0.0, []))  # an empty second list: fuse() then gives RRF scores
    by_scores = (
        v.routed
        and v.score_fusion
        and fusion.fuses_scores(classify(q.query).intent, signals.is_specific(q.query))
    )
    cands = (fusion.fuse_scores if by_scores else fusion.fuse)(lists, v.k)
    if v.routed and boosts.wants_centrality(classify(q.query).intent, routed=True):  # as search.py _rank
        head = cands[: boosts.CENTRALITY_DEPTH]
        places = [(f.hit.location.path, f.hit.location.start_line, f.hit.location.end_line) for f in head]
        values = [q.centrality.get(place, 0.0) for place in places]
        boosts.apply_centrality(cands, values + [0.0] * (len(cands) - len(head)))
    if v.params is None:
        return cands
    if not signals.applies(classify(q.query).intent, adaptive.keyword_coverage(q.query, keyword), v.params):
        penalties.apply_path_penalties(cands, q.query)  # what the server does then (search.py _rank)
        return diversity.per_file_decay(cands)
    # The server reads the definitions its definition leg found: none when the route asked no such leg.
    asked = not v.routed or weights.get("definition", 0.0) > 0
    definitions = [h.location for h in q.definitions] if asked else []
    return signals.rank(cands, q.query, definitions, bool(TEST_WORDS.search(q.query)), v.params)


def run_variant(qs: Sequence[QueryLegs], v: Variant, limit: int = 10) -> dict[str, dict[str, Any]]:
    out = {}
    for q in qs:
        ranked = rank_one(q, v)[:limit]
        out[q.qid] = {
            "results": [
                {
                    "path": f.hit.location.path,
                    "start_line": f.hit.location.start_line,
                    "end_line": f.hit.location.end_line,
                }
                for f in ranked
            ]
        }
    return out


def score_variants(
    pset: PolyglotSet, qs: Sequence[QueryLegs], variants: Sequence[Variant]
) -> dict[str, dict[str, dict[str, Any]]]:
    return {v.name: summarize(pset, run_variant(qs, v)) for v in variants}


ROWS = (
    "split:fit",
    *(f"split:fit/{c}" for c in CATEGORIES),
    "split:held-out",
    *(f"split:held-out/{c}" for c in CATEGORIES),
    "ALL",
)


def format_scores(scores: Mapping[str, Mapping[str, Mapping[str, Any]]], metric: str = "ndcg10") -> str:
    names = list(scores)
    width = max(10, *(len(n) + 2 for n in names))
    lines = [f"{'NDCG@10':<24}" + "".join(f"{n:>{width}}" for n in names)]
    for row in ROWS:
        cells = "".join(f"{(scores[n].get(row) or {}).get(metric) or 0:>{width}.3f}" for n in names)
        lines.append(f"{row.removeprefix('split:'):<24}{cells}")
    return "\n".join(lines)


def ablations(base: Variant) -> list[Variant]:
    """The base recipe, then one signal removed at a time."""
    assert base.params is not None
    p = base.params
    off: list[tuple[str, Callable[[Params], Params]]] = [
        ("-definition", lambda x: dataclasses.replace(x, definition_boost=0.0)),
        ("-path_words", lambda x: dataclasses.replace(x, stem_boost=0.0)),
        ("-coherence", lambda x: dataclasses.replace(x, coherence=0.0)),
        ("-vector_coherence", lambda x: dataclasses.replace(x, vector_coherence=0.0)),
        ("-penalties", signals.without_path_penalties),
        (
            "-saturation",
            lambda x: dataclasses.replace(x, saturation_decay=1.0, question_saturation_decay=1.0),
        ),
        (
            "-question_saturation",
            lambda x: dataclasses.replace(x, question_saturation_decay=x.saturation_decay),
        ),
        ("-specific", lambda x: dataclasses.replace(x, specific_words=0)),
        ("-path_share", lambda x: dataclasses.replace(x, path_word_max_share=1.0)),
        ("-repo_name", lambda x: dataclasses.replace(x, skip_repository_name=False)),
    ]
    plain_keyword = dataclasses.replace(base, name="-question_paths", question_paths=False)
    ranks_only = dataclasses.replace(base, name="-score_fusion", score_fusion=False)
    return (
        [base]
        + [dataclasses.replace(base, name=name, params=fn(p)) for name, fn in off]
        + [plain_keyword, ranks_only]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("legs", help="legs.jsonl from codesearch eval --polyglot --dump-legs")
    ap.add_argument("--polyglot", required=True, help="the polyglot folder")
    ap.add_argument(
        "--ablate", action="store_true", help="remove one signal at a time from the shipped recipe"
    )
    args = ap.parse_args(argv)
    pset = load_set(args.polyglot)
    qs = load_legs(args.legs)
    variants = [
        Variant("bm25", params=None),
        Variant("bm25+signals"),
        ROUTED,
    ]
    if any(q.vector for q in qs):
        variants += [
            Variant("vector", weights={"vector": 1.0}, params=None),
            Variant("rrf", weights={"keyword": 1.0, "vector": 1.0}, params=None),
            Variant("rrf+signals", weights={"keyword": 1.0, "vector": 1.0}),
        ]
    if args.ablate:
        variants = ablations(variants[2])  # the routed recipe: what the server does
    print(format_scores(score_variants(pset, qs, variants)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
