"""`codesearch search QUERY [--repo R] [--mode ...] [--limit N] [--json] [--explain]`"""

from __future__ import annotations

import argparse
import json
from typing import Any, cast

from codesearch.cli.client import call, channel
from codesearch.common.labels import enum_value, label
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

MODES = [
    "auto",
    "keyword",
    "literal",
    "regex",
    "semantic",
    "definition",
    "callers",
    "callees",
    "impact",
    "naive_hybrid",
]
PRESETS = ["default", "quick", "thorough"]
SNIPPET_LINES = 3  # lines of each hit's snippet in the text output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query")
    parser.add_argument("--repo", action="append", default=[], help="repository (repeatable; default: all)")
    parser.add_argument("--mode", choices=MODES, default="auto")
    parser.add_argument("--preset", choices=PRESETS, default="default")
    parser.add_argument("--limit", type=int, default=0, help="number of hits (default: Smart TopK decides)")
    parser.add_argument("--case-sensitive", action="store_true", help="literal/regex: match case")
    parser.add_argument("--lang", action="append", default=[], help="only this language (repeatable)")
    parser.add_argument("--path", default="", help="only paths matching this glob")
    parser.add_argument("--rerank", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--explain", action="store_true", help="how the answer was found: intent, legs, scores"
    )


def build_request(args: argparse.Namespace) -> search_pb2.SearchRequest:
    return search_pb2.SearchRequest(
        query=args.query,
        repositories=args.repo,
        mode=enum_value(search_pb2.SearchMode, f"SEARCH_MODE_{args.mode.upper()}"),
        preset=enum_value(search_pb2.Preset, f"PRESET_{args.preset.upper()}"),
        limit=args.limit,
        case_sensitive=args.case_sensitive,
        languages=args.lang,
        path_glob=args.path,
        rerank=enum_value(search_pb2.RerankPolicy, f"RERANK_POLICY_{args.rerank.upper()}"),
    )


def _leg(leg: int) -> str:
    return label(common_pb2.Leg, leg, "LEG_")


def hit_json(h: common_pb2.Hit) -> dict[str, object]:
    return {
        "repository": h.location.repository,
        "path": h.location.path,
        "start_line": h.location.start_line,
        "end_line": h.location.end_line,
        "score": h.score,
        "snippet": h.snippet,
        "symbol": h.symbol,
        "found_by": [_leg(x) for x in h.found_by],
        "leg_scores": [{"leg": _leg(s.leg), "rank": s.rank, "score": s.score} for s in h.leg_scores],
        "boosts": [{"name": b.name, "factor": b.factor} for b in h.boosts],
    }


def response_json(resp: search_pb2.SearchResponse) -> dict[str, object]:
    return {
        "hits": [hit_json(h) for h in resp.hits],
        "intent": label(search_pb2.Intent, resp.intent, "INTENT_"),
        "intent_confidence": resp.intent_confidence,
        "strategy": label(search_pb2.Strategy, resp.strategy, "STRATEGY_"),
        "confidence": resp.confidence,
        "weights": {w.modality: w.weight for w in resp.weights},
        "legs": [
            {
                "leg": _leg(r.leg),
                "status": label(common_pb2.LegStatus, r.status, "LEG_STATUS_"),
                "reason": r.reason,
                "detail": r.detail,
                "latency_ms": round(r.latency_ms, 3),
                "hits": r.hits,
                "weight": r.weight,
            }
            for r in resp.legs
        ],
        "total_latency_ms": round(resp.total_latency_ms, 3),
        "stage_ms": {k: round(v, 3) for k, v in resp.stage_ms.items()},
        "topk_reason": resp.topk_reason,
        "cache_hit": resp.cache_hit,
    }


def print_text(resp: search_pb2.SearchResponse, explain: bool) -> None:
    if not resp.hits:
        print("no results")
    for h in resp.hits:
        loc = h.location
        span = f"{loc.start_line}" if loc.start_line == loc.end_line else f"{loc.start_line}-{loc.end_line}"
        repo = f"{loc.repository}:" if loc.repository else ""
        print(f"{repo}{loc.path}:{span}  score {h.score:.4f}" + (f"  {h.symbol}" if h.symbol else ""))
        for line in h.snippet.splitlines()[:SNIPPET_LINES]:
            print(f"    {line}")
        if explain:
            legs = ", ".join(f"{_leg(s.leg)} #{s.rank + 1} ({s.score:.3f})" for s in h.leg_scores)
            boosts = ", ".join(f"{b.name} x{b.factor:.2f}" for b in h.boosts)
            print(f"    found by: {legs}" + (f"; boosts: {boosts}" if boosts else ""))
    if explain:
        data = response_json(resp)
        print()
        print(
            f"intent {data['intent']} ({resp.intent_confidence:.2f}), strategy {data['strategy']}, confidence {resp.confidence:.2f}"
        )
        print("weights: " + ", ".join(f"{w.modality} {w.weight:.2f}" for w in resp.weights))
        for leg in cast(list[dict[str, Any]], data["legs"]):
            reason = f" ({leg['reason']})" if leg["reason"] else ""
            reason += f" [{leg['detail']}]" if leg["detail"] else ""
            print(
                f"  leg {leg['leg']:<10} {leg['status']:<8} {leg['hits']:>3} hits {leg['latency_ms']:>8.2f} ms  weight {leg['weight']:.2f}{reason}"
            )
        stages = ", ".join(f"{k} {v:.2f} ms" for k, v in resp.stage_ms.items())
        print(f"total {resp.total_latency_ms:.2f} ms ({stages}); top-k: {resp.topk_reason}")


def run(args: argparse.Namespace) -> int:
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    resp = call(args.address, lambda: stub.Search(build_request(args)))
    if args.json:
        print(json.dumps(response_json(resp), indent=1))
    else:
        print_text(resp, args.explain)
    return 0
