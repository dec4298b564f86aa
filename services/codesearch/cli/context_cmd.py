"""`codesearch context QUERY [--repo R] [--budget N] [--json]`: a context pack for an agent or a person."""

from __future__ import annotations

import argparse
import json

from codesearch.cli.client import call, channel
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

DEFAULT_BUDGET = 12_000  # characters: a few definitions with their surroundings, about 3k tokens


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query")
    parser.add_argument("--repo", action="append", default=[], help="repository (repeatable; default: all)")
    parser.add_argument(
        "--budget", type=int, default=DEFAULT_BUDGET, help="most characters of code (500..200000)"
    )
    parser.add_argument("--no-neighbors", action="store_true", help="do not add adjacent lines")
    parser.add_argument(
        "--no-breadcrumbs", action="store_true", help="do not add enclosing headers and siblings"
    )
    parser.add_argument("--no-graph", action="store_true", help="do not add called, calling or imported code")
    parser.add_argument(
        "--max-segments", type=int, default=0, help="most separate segments per file (default 4)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def build_request(args: argparse.Namespace) -> search_pb2.BuildContextRequest:
    return search_pb2.BuildContextRequest(
        query=args.query,
        repositories=args.repo,
        budget_chars=args.budget,
        options=search_pb2.ContextOptions(
            no_neighbors=args.no_neighbors,
            no_breadcrumbs=args.no_breadcrumbs,
            no_graph=args.no_graph,
            max_segments_per_file=args.max_segments,
        ),
    )


def _loc(loc: common_pb2.Location) -> dict[str, object]:
    return {
        "repository": loc.repository,
        "path": loc.path,
        "start_line": loc.start_line,
        "end_line": loc.end_line,
    }


def response_json(resp: search_pb2.BuildContextResponse) -> dict[str, object]:
    def chunk(c: search_pb2.ContextChunk) -> dict[str, object]:
        out: dict[str, object] = {**_loc(c.location), "score": c.score, "reason": c.reason}
        if c.HasField("expanded_from"):
            out["expanded_from"] = _loc(c.expanded_from)
        return out

    return {
        "seeds": [chunk(c) for c in resp.seeds],
        "expanded": [chunk(c) for c in resp.expanded],
        "files": [
            {
                "repository": f.repository,
                "path": f.path,
                "language": f.language,
                "segments": [
                    {"start_line": s.start_line, "end_line": s.end_line, "text": s.text} for s in f.segments
                ],
            }
            for f in resp.files
        ],
        "text": resp.text,
        "used_chars": resp.used_chars,
        "debug": {k: round(v, 3) for k, v in sorted(resp.debug.items())},
    }


def run(args: argparse.Namespace) -> int:
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    resp = call(args.address, lambda: stub.BuildContext(build_request(args)))
    if args.json:
        print(json.dumps(response_json(resp), indent=1))
        return 0
    print(resp.text, end="" if resp.text.endswith("\n") else "\n")
    reasons: dict[str, int] = {}
    for c in resp.expanded:
        reasons[c.reason] = reasons.get(c.reason, 0) + 1
    extra = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    print(
        f"-- {resp.used_chars}/{args.budget} chars, {len(resp.files)} files, {len(resp.seeds)} seeds"
        + (f", expanded: {extra}" if extra else "")
        + (" (graph unavailable)" if resp.debug.get("degraded_graph") else "")
    )
    return 0
