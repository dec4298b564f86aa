"""Scale curve: index 1x, 4x, 16x a corpus through a real server and print how each cost grows.

    codesearch bench scale --corpus /tmp/corpus/cpython-lib --queries ../shared/eval/dev-queries.jsonl
        [--sizes 1,4,16] [--per-intent 50] [--json FILE]

For each size N a fresh `codesearch serve` process over a fresh data directory indexes N copies of the corpus
(distinct repositories, one after another, as `codesearch index` would) and this prints: index time (until every
copy's semantic search is complete: some vector tier holds every chunk), index size on disk per leg (keyword
BM25/tantivy, trigram, vector/usearch, graph SQLite), the server's memory (RSS at the end and its peak), and
p50/p99 latency per query intent over queries that search every copy at once. Each figure is also given as a
ratio to the smallest size's row, measured in the same run: that row is the baseline.

The copies are hard links (a copied tree where /tmp spans two file systems); each copy's files sit under a folder
named for the copy, so every chunk's embedded text (which starts with its path's words) differs from the other
copies' and the embedding cache cannot answer one copy from another: each copy costs what as much distinct code
would. The transformer tier is left out by default (`--tiers static`): its background fill would take hours at
16x and would load the CPU while the latencies are measured.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import grpc

from codesearch.bench.load import percentiles
from codesearch.bench.procs import ServerProcess
from codesearch.common.security import sync_channel
from codesearch.config import Settings
from codesearch.v1 import search_pb2, search_pb2_grpc, vector_pb2, vector_pb2_grpc

DEFAULT_SIZES = (1, 4, 16)  # the curve: 16x the standard library is ~9,600 files
DEFAULT_TIERS = (
    "static"  # semantic search complete when indexing returns, without the hours-long transformer fill
)
DEFAULT_PER_INTENT = 50  # queries per intent: ~220 of the dev set's 475; 16x answers them in a few minutes
DEFAULT_MAX_RSS_GIB = 12.0  # the machine has 24 GiB shared by several jobs: stop the server well before that
WARMUP_QUERIES = (
    5  # the first searches open every snapshot and fill OS caches; not what a steady state looks like
)
READY_TIMEOUT_S = (
    180.0  # the reranker model loads in the background at start (~5-15 s; more on a busy machine)
)
INDEX_TIMEOUT_S = 3600.0  # one copy of a ~600-file corpus takes ~25 s; a stuck run fails instead of hanging
COMPLETE_TIMEOUT_S = (
    600.0  # after the last copy: until a vector tier holds every chunk (static: already done)
)
SEARCH_TIMEOUT_S = 30.0  # a search slower than this counts as an error, not a latency
POLL_S = 0.5  # status polling and memory sampling interval

# The query set's classes (`klass`) and the intent each stands for, in the order printed.
INTENTS = {
    "definition": "definition",
    "references": "references",
    "exact_match": "exact",
    "concept": "concept",
    "impact": "impact",
}
# Which leg each status row belongs to: the orchestrator prefixes every leg's detail with its name.
LEG_PREFIXES = {
    "keyword bm25": "bm25",
    "keyword trigram": "trigram",
    "vector": "vector",
    "graph": "graph",
}
LEGS = tuple(LEG_PREFIXES.values())


class ScaleError(Exception):
    """A size could not be measured (bad input, a failed index, the memory limit); the message says why."""


@dataclass(frozen=True)
class Query:
    intent: str
    text: str


@dataclass
class SizeResult:
    size: int
    files: int
    chunks: int
    index_s: float
    disk_bytes: dict[str, int]  # leg -> bytes over every copy
    rss_bytes: int  # the server's resident memory after indexing and the queries
    peak_rss_bytes: int  # the highest resident memory seen (kernel high-water mark or sampled)
    latency: dict[str, dict[str, float]] = field(default_factory=dict)  # intent -> calls, p50_ms, p99_ms
    errors: dict[str, int] = field(default_factory=dict)  # "intent: STATUS" -> count
    load_average: tuple[float, float] = (0.0, 0.0)  # 1-min load average when the size started and ended


def parse_sizes(text: str) -> list[int]:
    bad = ScaleError(f"--sizes takes positive whole numbers separated by commas (e.g. 1,4,16), not {text!r}")
    try:
        sizes = sorted({int(s) for s in text.split(",") if s.strip()})
    except ValueError:
        raise bad from None
    if not sizes or sizes[0] < 1:
        raise bad
    return sizes


def read_queries(path: Path, per_intent: int) -> list[Query]:
    """Up to `per_intent` queries of each intent, spread evenly over the file (so every variant is in)."""
    if not path.is_file():
        raise ScaleError(f"query file {path} does not exist")
    by_intent: dict[str, list[str]] = {i: [] for i in INTENTS.values()}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            klass, text = row["klass"], row["query"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ScaleError(f"{path}:{n}: not a query line with 'klass' and 'query' ({e})") from None
        if klass in INTENTS:
            by_intent[INTENTS[klass]].append(text)
    queries: list[Query] = []
    for intent, texts in by_intent.items():
        step = max(1, len(texts) / per_intent) if per_intent else 1
        picked = [texts[int(i * step)] for i in range(min(len(texts), per_intent or len(texts)))]
        queries += [Query(intent, t) for t in picked]
    if not queries:
        raise ScaleError(f"{path} has no query of the classes {', '.join(INTENTS)}")
    return queries


def make_copies(corpus: Path, work: Path, count: int) -> list[Path]:
    """`count` copies of `corpus` as repository roots: root i holds the corpus under a folder `copyNN`."""
    if not corpus.is_dir():
        raise ScaleError(f"corpus {corpus} is not a directory")
    roots = []
    for i in range(1, count + 1):
        root = work / f"copy{i:02d}"
        inner = root / f"copy{i:02d}"
        shutil.rmtree(root, ignore_errors=True)  # made afresh: a work folder may hold another corpus's copies
        try:
            shutil.copytree(corpus, inner, copy_function=os.link, symlinks=True)
        except OSError:  # another file system: a real copy
            shutil.rmtree(inner, ignore_errors=True)
            shutil.copytree(corpus, inner, symlinks=True)
        roots.append(root)
    return roots


class MemoryWatch:
    """Samples a process tree's resident memory in a thread: the peak, and a hard stop past a limit."""

    def __init__(self, pid: int, limit_bytes: int, on_limit: Callable[[], None]) -> None:
        self.pid, self.limit_bytes, self.on_limit = pid, limit_bytes, on_limit
        self.peak = 0
        self.over_limit = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scale-memory-watch", daemon=True)

    def __enter__(self) -> MemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            rss = tree_rss(self.pid)
            self.peak = max(self.peak, rss)
            if rss > self.limit_bytes and not self.over_limit:
                self.over_limit = True
                self.on_limit()


def _pids(pid: int) -> list[int]:
    """The process and its descendants (from /proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                continue
    return out


def _status_kib(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss(pid: int) -> int:
    return sum(_status_kib(p, "VmRSS") for p in _pids(pid)) * 1024


def tree_peak_rss(pid: int) -> int:
    """The kernel's high-water mark of resident memory, summed over the tree (children counted at their own)."""
    return sum(_status_kib(p, "VmHWM") for p in _pids(pid)) * 1024


def _wait_ready(stub: search_pb2_grpc.SearchServiceStub, timeout_s: float) -> str:
    """Until no service is still loading (the reranker's model loads at start and would share the CPU with
    the first index); a service that failed to load for good is reported by the searches, not waited for."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = stub.GetStatus(search_pb2.GetStatusRequest(), timeout=SEARCH_TIMEOUT_S)
        if not any("loading" in s.detail for s in status.services if not s.available):
            return ", ".join(
                f"{s.name} {'up' if s.available else 'DOWN'} ({s.detail})" for s in status.services
            )
        time.sleep(POLL_S)
    raise ScaleError(f"the server's services were still loading after {timeout_s:.0f}s")


def _index(
    stub: search_pb2_grpc.SearchServiceStub, root: Path, name: str
) -> search_pb2.IndexRepositoryResponse:
    last = search_pb2.IndexRepositoryResponse()
    try:
        request = search_pb2.IndexRepositoryRequest(path=str(root.resolve()), name=name)
        for progress in stub.IndexRepository(request, timeout=INDEX_TIMEOUT_S):
            last = progress
    except grpc.RpcError as e:
        raise ScaleError(f"indexing {name}: {e.code().name}: {e.details()}") from None
    if last.phase != search_pb2.INDEX_PHASE_DONE:
        raise ScaleError(f"indexing {name} ended in phase {search_pb2.IndexPhase.Name(last.phase)}")
    if last.degraded_legs:
        raise ScaleError(f"indexing {name}: degraded legs: {', '.join(last.degraded_legs)}")
    return last


def _wait_semantic_complete(vector: vector_pb2_grpc.VectorServiceStub, names: Iterable[str]) -> None:
    """Until some tier holds a vector for every chunk of every repository in `names`."""
    wanted = set(names)
    deadline = time.monotonic() + COMPLETE_TIMEOUT_S
    while time.monotonic() < deadline:
        stats = vector.GetVectorStats(vector_pb2.GetVectorStatsRequest(), timeout=SEARCH_TIMEOUT_S)
        complete = {t.repository for t in stats.repository_tiers if t.total and t.embedded == t.total}
        if wanted <= complete:
            return
        time.sleep(POLL_S)
    raise ScaleError(f"semantic search incomplete {COMPLETE_TIMEOUT_S:.0f}s after indexing")


def _disk_by_leg(stub: search_pb2_grpc.SearchServiceStub, names: set[str]) -> dict[str, int]:
    status = stub.GetStatus(search_pb2.GetStatusRequest(), timeout=SEARCH_TIMEOUT_S)
    disk = dict.fromkeys(LEGS, 0)
    for st in status.leg_stats:
        leg = next((leg for prefix, leg in LEG_PREFIXES.items() if st.detail.startswith(prefix)), None)
        if leg is not None and st.repository in names:
            disk[leg] += st.disk_bytes
    return disk


def _search_all(stub: search_pb2_grpc.SearchServiceStub, queries: list[Query], result: SizeResult) -> None:
    """Every query over every copy, one at a time, the query cache off; latency by intent."""
    for q in queries[:WARMUP_QUERIES]:
        _search(stub, q.text)
    latencies: dict[str, list[float]] = {i: [] for i in INTENTS.values()}
    for q in queries:
        ms, code = _search(stub, q.text)
        if code:
            result.errors[f"{q.intent}: {code}"] = result.errors.get(f"{q.intent}: {code}", 0) + 1
        else:
            latencies[q.intent].append(ms)
    for intent, values in latencies.items():
        if values:
            pct = percentiles(values)
            result.latency[intent] = {"calls": len(values), "p50_ms": pct["p50_ms"], "p99_ms": pct["p99_ms"]}


def _search(stub: search_pb2_grpc.SearchServiceStub, text: str) -> tuple[float, str]:
    """(milliseconds, "" or the error status name) of one default search over every repository."""
    t0 = time.perf_counter()
    try:
        stub.Search(search_pb2.SearchRequest(query=text, no_cache=True), timeout=SEARCH_TIMEOUT_S)
    except grpc.RpcError as e:
        return (time.perf_counter() - t0) * 1000, e.code().name
    return (time.perf_counter() - t0) * 1000, ""


def measure_size(
    size: int,
    roots: list[Path],
    queries: list[Query],
    work: Path,
    tiers: str,
    max_rss_bytes: int,
    log: Callable[[str], None],
) -> SizeResult:
    """One row: a fresh server over a fresh data directory indexes `size` copies, then answers the queries."""
    home = work / f"home-{size}x"
    shutil.rmtree(home, ignore_errors=True)
    # A fresh per-home embedding cache: nothing embedded by an earlier size or run answers this one.
    env = {"CODESEARCH_VECTOR_TIERS": tiers, "CODESEARCH_EMBEDDING_CACHE": ""}
    server = ServerProcess(["all"], home, env=env).start()
    load_start = os.getloadavg()[0]
    try:
        assert server.proc is not None
        channel = sync_channel(server.address, Settings.from_env({**os.environ, **env}))
        stub = search_pb2_grpc.SearchServiceStub(channel)
        vector = vector_pb2_grpc.VectorServiceStub(channel)
        log(f"  {size}x: {_wait_ready(stub, READY_TIMEOUT_S)}")
        with MemoryWatch(server.proc.pid, max_rss_bytes, server.kill9) as watch:
            names, files, chunks = [], 0, 0
            t0 = time.perf_counter()
            try:
                for i, root in enumerate(roots[:size], 1):
                    names.append(f"scale-{i:02d}")
                    done = _index(stub, root, names[-1])
                    files, chunks = files + done.files_total, chunks + done.chunks
                    log(
                        f"  {size}x: indexed {names[-1]} ({done.files_total} files, {done.chunks} chunks) "
                        f"at {time.perf_counter() - t0:.1f}s"
                    )
                _wait_semantic_complete(vector, names)
                index_s = time.perf_counter() - t0
                result = SizeResult(size, files, chunks, index_s, _disk_by_leg(stub, set(names)), 0, 0)
                _search_all(stub, queries, result)
            except (ScaleError, grpc.RpcError) as e:
                if watch.over_limit:
                    raise ScaleError(
                        f"{size}x: the server's memory passed {max_rss_bytes / 2**30:.1f} GiB; stopped it "
                        "(raise --max-rss-gib if the machine has room)"
                    ) from None
                raise ScaleError(f"{size}x: {e}\n{server.log_tail(1500)}") from None
            result.rss_bytes = tree_rss(server.proc.pid)
            result.peak_rss_bytes = max(watch.peak, tree_peak_rss(server.proc.pid))
        result.load_average = (round(load_start, 2), round(os.getloadavg()[0], 2))
        return result
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def run_scale(
    sizes: list[int],
    corpus: Path,
    queries: list[Query],
    work: Path,
    tiers: str = DEFAULT_TIERS,
    max_rss_gib: float = DEFAULT_MAX_RSS_GIB,
    log: Callable[[str], None] = print,
) -> list[SizeResult]:
    roots = make_copies(corpus, work / "corpus", max(sizes))
    results = []
    for size in sizes:
        results.append(measure_size(size, roots, queries, work, tiers, int(max_rss_gib * 2**30), log))
        log(format_rows(results[:1], results[-1:])[-1])
    return results


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def format_rows(base_rows: list[SizeResult], rows: list[SizeResult]) -> list[str]:
    """Markdown table lines (header first) of `rows`, each figure with its ratio to `base_rows[0]`."""
    base = base_rows[0]
    intents = [i for i in INTENTS.values() if i in base.latency]
    head = ["size", "files", "chunks", "index s"]
    head += [f"{leg} MB" for leg in LEGS] + ["RSS MB", "peak RSS MB"]
    head += [f"{i} p50 / p99 ms" for i in intents]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [f"{r.size}x", f"{r.files:,} ({_ratio(r.files, base.files)})"]
        cells.append(f"{r.chunks:,} ({_ratio(r.chunks, base.chunks)})")
        cells.append(f"{r.index_s:.1f} ({_ratio(r.index_s, base.index_s)})")
        for leg in LEGS:
            cells.append(
                f"{r.disk_bytes[leg] / 1e6:,.1f} ({_ratio(r.disk_bytes[leg], base.disk_bytes[leg])})"
            )
        cells.append(f"{r.rss_bytes / 1e6:,.0f} ({_ratio(r.rss_bytes, base.rss_bytes)})")
        cells.append(f"{r.peak_rss_bytes / 1e6:,.0f} ({_ratio(r.peak_rss_bytes, base.peak_rss_bytes)})")
        for i in intents:
            lat, blat = r.latency.get(i, {}), base.latency[i]
            p50, p99 = lat.get("p50_ms", 0.0), lat.get("p99_ms", 0.0)
            cells.append(
                f"{p50:,.0f} / {p99:,.0f} ({_ratio(p50, blat['p50_ms'])} / {_ratio(p99, blat['p99_ms'])})"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def format_report(results: list[SizeResult], corpus: Path, tiers: str) -> str:
    calls = {i: int(v["calls"]) for i, v in results[0].latency.items()}
    lines = [
        f"corpus {corpus}, vector tiers {tiers!r}; ratios against the {results[0].size}x row of this run",
        "queries per intent (each over every copy, query cache off): "
        + ", ".join(f"{i} {n}" for i, n in calls.items()),
        *format_rows(results, results),
        "1-min load average at start -> end of each size: "
        + ", ".join(f"{r.size}x {r.load_average[0]} -> {r.load_average[1]}" for r in results),
    ]
    errors = {f"{r.size}x {k}": n for r in results for k, n in r.errors.items()}
    if errors:
        lines.append("errors: " + ", ".join(f"{k} {n}" for k, n in errors.items()))
    return "\n".join(lines)


def results_json(results: list[SizeResult]) -> str:
    return json.dumps([asdict(r) for r in results], indent=1)
