"""Search latency through gRPC, per query class, against a baseline server measured in the same run.

    python -m codesearch_lab.bench.latency ../shared/eval/dev-queries.jsonl --repo cpython-lib \
        --address 127.0.0.1:50615 --baseline 127.0.0.1:50616 [--rounds 2] [--pids 123,456]

Both servers must hold the same index. Each query goes to both, one after the other, the order swapped every
query, so that a load that comes and goes on a shared machine weighs on both alike. Prints p50/p99 per class
for each and their ratio (candidate / baseline), the server's CPU time per query when its process id is given
(steadier than wall time when other work shares the cores), and how many answers differ between the two: the
same index and ranking must give the same hits, scores and confidence.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from codesearch.bench.load import percentile
from codesearch.config import MAX_MESSAGE_BYTES
from codesearch.eval.harness import Variant, request_for
from codesearch.eval.runfile import Query, load_queries
from codesearch.v1 import search_pb2, search_pb2_grpc

SEARCH_TIMEOUT_S = 30.0  # far above any search; a hung server fails the run instead of stalling it
WARMUP_EVERY = (
    10  # every 10th query is asked once unmeasured first: each class pays its lazy loads (searchers, models)
)
LIMIT = 10  # results per query, as `codesearch eval` asks by default (score.py counts the first 10)
CLOCK_TICKS_S = 100  # os.sysconf("SC_CLK_TCK") on Linux: /proc/<pid>/stat counts CPU time in these


@dataclass
class Server:
    name: str
    address: str
    pid: int | None
    stub: search_pb2_grpc.SearchServiceStub
    ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    answers: dict[str, tuple] = field(default_factory=dict)
    cpu_s: float = 0.0


def open_server(name: str, address: str, pid: int | None) -> Server:
    channel = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)])
    return Server(name, address, pid, search_pb2_grpc.SearchServiceStub(channel))


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a local process so far (0.0 when no process id is given)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS_S  # utime, stime (fields 14 and 15 of stat)


def answer_of(resp: search_pb2.SearchResponse) -> tuple:
    """What must be identical between two servers with the same index and ranking."""
    hits = tuple(
        (h.location.path, h.location.start_line, h.location.end_line, round(h.score, 9)) for h in resp.hits
    )
    return hits, round(resp.confidence, 9)


def ask(server: Server, q: Query, repo: str, measured: bool) -> None:
    request = request_for(q, Variant("auto"), repo, LIMIT)  # what `codesearch eval --modes auto` asks
    started = time.perf_counter()
    resp = server.stub.Search(request, timeout=SEARCH_TIMEOUT_S)
    ms = (time.perf_counter() - started) * 1000
    if measured:
        server.ms[q.klass].append(ms)
        server.answers[q.id] = answer_of(resp)


def run(queries: list[Query], repo: str, candidate: Server, baseline: Server, rounds: int) -> None:
    for q in queries[::WARMUP_EVERY]:
        ask(candidate, q, repo, measured=False)
        ask(baseline, q, repo, measured=False)
    cpu0 = process_cpu_s(candidate.pid), process_cpu_s(baseline.pid)
    for r in range(rounds):
        for i, q in enumerate(queries):
            pair = (candidate, baseline) if (i + r) % 2 == 0 else (baseline, candidate)
            for server in pair:
                ask(server, q, repo, measured=True)
    calls = len(queries) * rounds
    candidate.cpu_s = (process_cpu_s(candidate.pid) - cpu0[0]) / calls
    baseline.cpu_s = (process_cpu_s(baseline.pid) - cpu0[1]) / calls


def report(candidate: Server, baseline: Server) -> str:
    classes = sorted(candidate.ms)
    rows = [(k, candidate.ms[k], baseline.ms[k]) for k in classes]
    rows.append(
        ("ALL", [m for k in classes for m in candidate.ms[k]], [m for k in classes for m in baseline.ms[k]])
    )
    lines = [
        f"candidate {candidate.address}, baseline {baseline.address}; ms through gRPC, auto mode, one at a time",
        f"{'class':<14}{'n':>6}{'cand p50':>10}{'base p50':>10}{'ratio':>8}{'cand p99':>10}{'base p99':>10}{'ratio':>8}",
    ]
    for name, cand, base in rows:
        c50, b50 = statistics.median(cand), statistics.median(base)
        c99, b99 = percentile(cand, 0.99), percentile(base, 0.99)
        lines.append(
            f"{name:<14}{len(cand):>6}{c50:>10.1f}{b50:>10.1f}{c50 / b50:>8.2f}{c99:>10.1f}{b99:>10.1f}{c99 / b99:>8.2f}"
        )
    if candidate.pid is not None and baseline.pid is not None and min(candidate.cpu_s, baseline.cpu_s) <= 0:
        idle = [str(s.pid) for s in (candidate, baseline) if s.cpu_s <= 0]
        lines.append(
            f"server CPU per query: no CPU time seen in process {', '.join(idle)} (not the server's pid?)"
        )
    elif candidate.pid is not None and baseline.pid is not None:
        lines.append(
            f"server CPU per query: candidate {candidate.cpu_s * 1000:.1f} ms, baseline "
            f"{baseline.cpu_s * 1000:.1f} ms, ratio {candidate.cpu_s / baseline.cpu_s:.2f}"
        )
    differ = sorted(qid for qid, a in candidate.answers.items() if baseline.answers.get(qid) != a)
    lines.append(
        f"answers that differ (hits, scores, confidence): {len(differ)} of {len(candidate.answers)}"
        + (f": {', '.join(differ[:10])}" if differ else "")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("queries", type=Path, help="query set (JSONL, schema of ../shared/eval/dev-queries.jsonl)")
    p.add_argument("--repo", required=True, help="the indexed repository both servers hold")
    p.add_argument("--address", required=True, help="the candidate server HOST:PORT")
    p.add_argument("--baseline", required=True, help="the baseline server HOST:PORT")
    p.add_argument("--rounds", type=int, default=1, help="times through the query set")
    p.add_argument("--pids", default="", help="CANDIDATE_PID,BASELINE_PID: also report server CPU per query")
    args = p.parse_args(argv)
    pids = [int(x) for x in args.pids.split(",")] if args.pids else [None, None]
    if len(pids) != 2:
        p.error("--pids takes two process ids: CANDIDATE_PID,BASELINE_PID")
    candidate = open_server("candidate", args.address, pids[0])
    baseline = open_server("baseline", args.baseline, pids[1])
    run(load_queries(args.queries), args.repo, candidate, baseline, args.rounds)
    print(report(candidate, baseline))


if __name__ == "__main__":
    main()
