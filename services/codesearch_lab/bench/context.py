"""How often a context pack holds the gold code, against the plain "top Search chunks until the budget is full".

    PYTHONPATH=services python3 -m codesearch_lab.bench.context --address 127.0.0.1:50610 \\
        --repo cpython-lib --eval-dir ../shared/eval [--budgets 4000 8000 16000] [--limit N]

concept and semantic queries: share of queries whose gold span (same path, lines overlapping within +-3) is in
the pack. references queries: share of gold call-site files in the pack (mean over queries). Both systems see the
same Search hits (the pack asks Search for context.SEED_LIMIT hits; the baseline asks for the same number).
The baseline takes whole hit spans best first; the first that does not fit is cut by whole lines and ends it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import grpc
from codesearch.config import MAX_MESSAGE_BYTES
from codesearch.orchestrator.context import SEED_LIMIT
from codesearch.orchestrator.packing import Candidate, FileText, Packer
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

GOLD_SLACK = 3  # lines of slack when matching a gold span, as the eval's scorer does for concept queries
DEFAULT_BUDGETS = (4000, 8000, 16000)
UNLIMITED_SEGMENTS = 10**6  # the baseline has no per-file segment cap

Spans = dict[str, list[tuple[int, int]]]  # path -> included line ranges


def load_queries(eval_dir: Path) -> list[dict]:
    out = []
    for line in (eval_dir / "dev-queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["klass"] in ("concept", "references"):
            out.append(q)
    for line in (eval_dir / "semantic-dev.jsonl").read_text().splitlines():
        out.append(json.loads(line))
    return out


def pack_spans(resp: search_pb2.BuildContextResponse) -> Spans:
    spans: Spans = {}
    for f in resp.files:
        spans.setdefault(f.path, []).extend((s.start_line, s.end_line) for s in f.segments)
    return spans


class Baseline:
    """Top Search hits, whole, until the budget is full; texts read from the keyword leg like the pack's."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.keyword = keyword_pb2_grpc.KeywordServiceStub(channel)
        self.files: dict[tuple[str, str], FileText] = {}

    def text(self, repo: str, path: str) -> FileText:
        key = (repo, path)
        if key not in self.files:
            r = self.keyword.ReadFile(keyword_pb2.ReadFileRequest(repository=repo, path=path))
            self.files[key] = FileText.from_text(repo, path, r.language, r.text)
        return self.files[key]

    def spans(self, hits: list, budget: int) -> tuple[Spans, int]:
        packer = Packer(budget, UNLIMITED_SEGMENTS)
        for h in hits:
            loc = h.location
            text = self.text(loc.repository, loc.path)
            full = Candidate(
                loc.repository,
                loc.path,
                loc.start_line,
                max(loc.start_line, loc.end_line),
                h.score,
                "seed",
                "seed",
            )
            if _covered_by(packer, full):
                continue
            taken = packer.offer(full, text)
            if taken is None or taken[1] < min(full.end, len(text.lines)):
                break  # cut by the budget: it is full
        spans: Spans = {}
        for f in packer.files.values():
            spans.setdefault(f.text.path, []).extend(f.ranges)
        return spans, packer.used


def _covered_by(packer: Packer, c: Candidate) -> bool:
    f = packer.files.get((c.repository, c.path))
    return f is not None and any(s <= c.start and c.end <= e for s, e in f.ranges)


def gold_in(spans: Spans, gold: dict) -> bool:
    lo, hi = gold["line"] - GOLD_SLACK, gold.get("end_line", gold["line"]) + GOLD_SLACK
    return any(s <= hi and e >= lo for s, e in spans.get(gold["path"], []))


def score(q: dict, spans: Spans) -> float:
    if q["klass"] == "references":
        files = {g["path"] for g in q["gold"]}
        return sum(1 for p in files if p in spans) / len(files)
    return 1.0 if any(gold_in(spans, g) for g in q["gold"]) else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--address", default="127.0.0.1:50610")
    ap.add_argument("--repo", default="cpython-lib")
    ap.add_argument(
        "--eval-dir", type=Path, required=True, help="folder of dev-queries.jsonl and semantic-dev.jsonl"
    )
    ap.add_argument("--budgets", type=int, nargs="+", default=list(DEFAULT_BUDGETS))
    ap.add_argument("--limit", type=int, default=0, help="at most this many queries per class (0: all)")
    ap.add_argument("--no-expansion", action="store_true", help="pack seeds only (to measure the expansions)")
    args = ap.parse_args(argv)

    channel = grpc.insecure_channel(
        args.address,
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)],
    )
    search = search_pb2_grpc.SearchServiceStub(channel)
    baseline = Baseline(channel)
    queries = load_queries(args.eval_dir)
    if args.limit:
        per: dict[str, int] = {}
        kept = []
        for q in queries:
            per[q["klass"]] = per.get(q["klass"], 0) + 1
            if per[q["klass"]] <= args.limit:
                kept.append(q)
        queries = kept
    opts = (
        search_pb2.ContextOptions(no_neighbors=True, no_breadcrumbs=True, no_graph=True)
        if args.no_expansion
        else None
    )

    # sums[(klass, budget, system)] -> total score; used[(budget, system)] -> chars
    sums: dict[tuple[str, int, str], float] = {}
    used: dict[tuple[int, str], int] = {}
    counts: dict[str, int] = {}
    latencies: list[float] = []
    for q in queries:
        klass = q["klass"]
        counts[klass] = counts.get(klass, 0) + 1
        hits = list(
            search.Search(
                search_pb2.SearchRequest(query=q["query"], repositories=[args.repo], limit=SEED_LIMIT)
            ).hits
        )
        for budget in args.budgets:
            t = time.perf_counter()
            resp = search.BuildContext(
                search_pb2.BuildContextRequest(
                    query=q["query"], repositories=[args.repo], budget_chars=budget, options=opts
                )
            )
            latencies.append((time.perf_counter() - t) * 1000)
            assert resp.used_chars <= budget, (q["id"], budget, resp.used_chars)
            base_spans, base_used = baseline.spans(hits, budget)
            for system, spans in (("pack", pack_spans(resp)), ("baseline", base_spans)):
                key = (klass, budget, system)
                sums[key] = sums.get(key, 0.0) + score(q, spans)
            used[(budget, "pack")] = used.get((budget, "pack"), 0) + resp.used_chars
            used[(budget, "baseline")] = used.get((budget, "baseline"), 0) + base_used

    print(
        f"{len(queries)} queries against {args.address} ({args.repo})"
        + (" - seeds only" if args.no_expansion else "")
    )
    header = (
        "| class | n | "
        + " | ".join(f"{b // 1000}k baseline | {b // 1000}k pack" for b in args.budgets)
        + " |"
    )
    print(header)
    print("|" + " --- |" * (2 + 2 * len(args.budgets)))
    for klass in sorted(counts):
        n = counts[klass]
        cells = []
        for b in args.budgets:
            cells.append(f"{sums[(klass, b, 'baseline')] / n:.3f}")
            cells.append(f"{sums[(klass, b, 'pack')] / n:.3f}")
        print(f"| {klass} | {n} | " + " | ".join(cells) + " |")
    total = len(queries)
    fill = " | ".join(
        f"{used[(b, 'baseline')] / total / b:.0%} | {used[(b, 'pack')] / total / b:.0%}" for b in args.budgets
    )
    print(f"| budget used (mean) | {total} | {fill} |")
    latencies.sort()
    print(
        f"BuildContext latency p50 {latencies[len(latencies) // 2]:.1f} ms, p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
