"""Re-score ranking variants offline over a leg dump (legs.jsonl from `codesearch eval --polyglot --dump-legs`).

The routed variant runs the server's own code on each leg's recorded answer: its query (orchestrator/query.py),
route, plan (orchestrator/plan.py: which legs, their weights, the fusion, whether the keyword leg settles the
query, the fallback of a direct plan), fusion and ranking recipe (orchestrator/ranking/recipe.py). So a variant of
the recipe's constants is scored over the 417 queries in seconds without asking the server again:

  python -m codesearch_lab.offline legs.jsonl --polyglot ../shared/eval/polyglot [--variants NAME ...]

With `--runs-out DIR` each variant's answers are also written as a run file (`run-NAME.jsonl`, a leading `-` of an
ablation's name written `no`), so `codesearch eval --polyglot ... --score DIR/run-routed.jsonl
DIR/run-no-definition.jsonl --paired routed no-definition` gives its paired, cross-validated difference.
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

from codesearch.eval.polyglot import CATEGORIES, PolyglotSet, load_set, merge_sets, summarize
from codesearch.orchestrator.fanout import reference_hit, symbol_hit
from codesearch.orchestrator.plan import LEG_SERVICE, LegPlan, Plan, Scope, plan_search
from codesearch.orchestrator.query import SPECIFIC_WORDS, Query
from codesearch.orchestrator.ranking import adaptive, boosts, fusion, recipe, signals
from codesearch.orchestrator.ranking.signals import Params
from codesearch.orchestrator.router import classify
from codesearch.v1 import common_pb2, graph_pb2, search_pb2
from google.protobuf.json_format import ParseDict


@dataclass(frozen=True)
class Variant:
    """One ranking variant: leg weights (0 drops a leg; unused when routed), the RRF k, and the ranking recipe's
    constants for the questions the server ranks with signals.SHIPPED (None: fusion alone)."""

    name: str
    weights: Mapping[str, float] = field(default_factory=lambda: {"keyword": 1.0})
    k: float = 60.0
    params: Params | None = signals.SHIPPED
    depth: int = 50
    routed: bool = False  # True: each query's leg weights as the router gives them (weights then unused)
    rrf_scores: bool = (
        False  # True: one list too is scored 1/(k + rank) (the server keeps a lone leg's scores)
    )
    score_fusion: bool = True  # routed meaning questions fuse the legs' scores (fusion.fuses_scores)
    specific_words: int = SPECIFIC_WORDS  # query.SPECIFIC_WORDS (0: no query is a long description)


# What the server does: the router's weights per query, its default preset's RRF k.
ROUTED = Variant("routed", routed=True, k=40.0)


def _hit(d: Mapping[str, Any]) -> common_pb2.Hit:
    return ParseDict(dict(d), common_pb2.Hit(), ignore_unknown_fields=True)


def _definition_hit(d: Mapping[str, Any], leg: common_pb2.Leg, rank: int) -> common_pb2.Hit:
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
                    centrality={(p, a, b): c for p, a, b, c in legs.get("centrality", [])},
                )
            )
    return out


# Every service a plan may ask: the dump recorded the keyword, vector and graph legs' answers.
SERVICES = frozenset(LEG_SERVICE.values())


def recorded(q: QueryLegs, p: LegPlan) -> list[common_pb2.Hit]:
    """The recorded answer of the leg a plan asks (nothing for legs a dump does not record: trigram, impact)."""
    by_leg = {
        common_pb2.LEG_KEYWORD: q.keyword,
        common_pb2.LEG_VECTOR: q.vector,
        common_pb2.LEG_DEFINITION: q.definitions,
        common_pb2.LEG_REFERENCES: q.references,
    }
    return by_leg.get(p.leg, [])


def answered(q: QueryLegs, v: Variant, plan: Plan, query: Query) -> list[fusion.RankedList]:
    """The lists the server's fan-out would fuse for this plan: each asked leg's recorded answer, the vector
    leg's dropped where the keyword leg's settles the query."""
    lists = [(p.leg, p.weight, recorded(q, p)[: v.depth]) for p in plan.legs if p.request is not None]
    keyword = next((hits for leg, _w, hits in lists if leg == common_pb2.LEG_KEYWORD), [])
    coverage = adaptive.keyword_coverage(query, keyword)
    if plan.settles and adaptive.decisive(plan.route.intent, coverage):
        lists = [entry for entry in lists if entry[0] != common_pb2.LEG_VECTOR]
    return [entry for entry in lists if entry[2]]


def routed_lists(q: QueryLegs, v: Variant, query: Query) -> tuple[Plan, list[fusion.RankedList]]:
    """The server's plan for the query (its fallback where the direct leg found nothing) and the lists it fuses."""
    request = search_pb2.SearchRequest(query=q.query)
    plan = plan_search(request, query, classify(query), Scope.of(request, []), set(SERVICES), budget_s=1.0)
    lists = answered(q, v, plan, query)
    if plan.fallback is not None and not lists:
        plan = plan.fallback
        lists = answered(q, v, plan, query)
    if not v.score_fusion and plan.strategy == search_pb2.STRATEGY_SCORE_FUSION:
        plan = dataclasses.replace(plan, strategy=search_pb2.STRATEGY_RRF)  # the -score_fusion ablation
    return plan, lists


def fixed_lists(q: QueryLegs, v: Variant) -> list[fusion.RankedList]:
    """The lists of a variant with fixed leg weights."""
    available = {
        "keyword": (common_pb2.LEG_KEYWORD, q.keyword),
        "vector": (common_pb2.LEG_VECTOR, q.vector),
        "definition": (common_pb2.LEG_DEFINITION, q.definitions),
        "references": (common_pb2.LEG_REFERENCES, q.references),
    }
    return [
        (available[name][0], w, available[name][1][: v.depth])
        for name, w in sorted(v.weights.items(), key=lambda kv: -kv[1])
        if w > 0 and available[name][1]
    ]


def rank_one(q: QueryLegs, v: Variant) -> list[fusion.FusedHit]:
    """The query ranked as the server ranks it (routed), or with the variant's fixed leg weights."""
    query = Query.parse(q.query, v.specific_words)
    if v.routed:
        plan, lists = routed_lists(q, v, query)
        strategy, intent, routed = plan.strategy, plan.route.intent, plan.routed
    else:
        lists, intent, routed = fixed_lists(q, v), classify(query).intent, False
        strategy = search_pb2.STRATEGY_RRF
    return rank_lists(q, v, query, lists, strategy, intent, routed)


def rank_lists(
    q: QueryLegs,
    v: Variant,
    query: Query,
    lists: list[fusion.RankedList],
    strategy: int,
    intent: int,
    routed: bool,
) -> list[fusion.FusedHit]:
    """The lists of a plan fused and ranked as the server does: fusion, centrality, the recipe."""
    if not lists:
        return []
    if v.rrf_scores and len(lists) == 1:
        lists.append((common_pb2.LEG_VECTOR, 0.0, []))  # an empty second list: fuse() then gives RRF scores
    cands = fusion.fuse_for(strategy, lists, v.k)
    if boosts.wants_centrality(intent, routed):
        head = cands[: boosts.CENTRALITY_DEPTH]
        places = [(f.hit.location.path, f.hit.location.start_line, f.hit.location.end_line) for f in head]
        values = [q.centrality.get(place, 0.0) for place in places]
        boosts.apply_centrality(cands, values + [0.0] * (len(cands) - len(head)))
    if v.params is None:
        return cands
    keyword = next((hits for leg, _w, hits in lists if leg == common_pb2.LEG_KEYWORD), [])
    # A fixed-weight variant ranks every meaning and name question it has not settled with its constants.
    params = recipe.recipe_for(intent, True, adaptive.keyword_coverage(query, keyword), v.params)
    # The server reads the definitions its definition leg found; a fixed-weight variant every recorded one.
    asked = lists if v.routed else [(common_pb2.LEG_DEFINITION, 1.0, q.definitions)]
    definitions = [h.location for leg, _w, hits in asked if leg == common_pb2.LEG_DEFINITION for h in hits]
    return recipe.rank(cands, query, definitions, params)


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
        ("-repo_name", lambda x: dataclasses.replace(x, skip_repository_name=False)),
    ]
    ranks_only = dataclasses.replace(base, name="-score_fusion", score_fusion=False)
    not_specific = dataclasses.replace(base, name="-specific", specific_words=0)
    return (
        [base]
        + [dataclasses.replace(base, name=name, params=fn(p)) for name, fn in off]
        + [ranks_only, not_specific]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("legs", help="legs.jsonl from codesearch eval --polyglot --dump-legs")
    ap.add_argument(
        "--polyglot",
        action="append",
        required=True,
        help="a polyglot-format set folder (repeat to merge sets)",
    )
    ap.add_argument(
        "--ablate", action="store_true", help="remove one signal at a time from the shipped recipe"
    )
    ap.add_argument("--runs-out", type=Path, default=None, help="also write each variant's run file here")
    args = ap.parse_args(argv)
    pset = merge_sets([load_set(folder) for folder in args.polyglot])
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
    if args.runs_out:
        write_runs(args.runs_out, qs, variants)
    return 0


def run_file_name(variant: str) -> str:
    """`run-NAME.jsonl`; an ablation's leading `-` becomes `no` so the name is not read as an option."""
    return f"run-{'no' + variant if variant.startswith('-') else variant}.jsonl"


def write_runs(folder: Path, qs: Sequence[QueryLegs], variants: Sequence[Variant]) -> None:
    """Each variant's answers as a run file in score.py's format (query_id, results)."""
    folder.mkdir(parents=True, exist_ok=True)
    for v in variants:
        with open(folder / run_file_name(v.name), "w", encoding="utf-8") as fh:
            for qid, answer in run_variant(qs, v).items():
                fh.write(json.dumps({"query_id": qid, **answer}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
