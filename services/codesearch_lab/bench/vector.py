"""On-demand benchmark of the vector leg (not a test: minutes of CPU).

    PYTHONPATH=services python3 -m codesearch_lab.bench.vector --corpus DIR [--vectors 100000] [--skip-embed] [--skip-reindex]

1. usearch HNSW with the store's parameters on N random unit vectors (384 dims): build time, recall@10 against
   exact search, p50 latency against an exact numpy scan, index size on disk; per expansion_search and dtype.
2. Exact-vs-HNSW crossover: p50 of a numpy scan, usearch exact=True and HNSW at growing sizes.
3. Embedding throughput (chunks/s) per available backend, on real definition units of the corpus.
4. Re-index after a one-file edit: how many chunks go through the model, how many come from the cache, time.
"""

from __future__ import annotations

import argparse
import ast
import tempfile
import time
from pathlib import Path

import numpy as np
from codesearch.vector import Index, MetricKind
from codesearch.vector import tier_index as store

DIMS = 384  # all-MiniLM-L6-v2
QUERIES = 200  # enough for a stable recall estimate and p50
SEED = 0
WINDOW_LINES = 60  # the eval baseline's window size, for files without definitions


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def p50_ms(fn, queries: np.ndarray) -> float:
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def exact_topk(data: np.ndarray, q: np.ndarray, k: int = 10) -> np.ndarray:
    s = data @ q
    idx = np.argpartition(-s, k)[:k]
    return idx[np.argsort(-s[idx])]


def bench_hnsw(n: int, dtypes: list[str]) -> None:
    rng = np.random.default_rng(SEED)
    data = unit(rng, n)
    queries = unit(rng, QUERIES)
    truth = [set(exact_topk(data, q).tolist()) for q in queries]
    numpy_p50 = p50_ms(lambda q: exact_topk(data, q), queries)
    print(
        f"\n## HNSW on {n:,} random unit vectors, {DIMS} dims (connectivity {store.HNSW_CONNECTIVITY}, "
        f"expansion_add {store.HNSW_EXPANSION_ADD}); exact numpy scan p50 {numpy_p50:.2f} ms"
    )
    print("| dtype | build s | size MiB | expansion_search | recall@10 | p50 ms | numpy/hnsw |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    keys = np.arange(n, dtype=np.uint64)
    for dtype in dtypes:
        index = Index(
            ndim=DIMS,
            metric=MetricKind.Cos,
            dtype=dtype,
            connectivity=store.HNSW_CONNECTIVITY,
            expansion_add=store.HNSW_EXPANSION_ADD,
        )
        t0 = time.perf_counter()
        index.add(keys, data)
        build = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as d:
            index.save(f"{d}/i.usearch")
            size = Path(f"{d}/i.usearch").stat().st_size / 2**20
        for ef in (64, 128, 256):
            index.expansion_search = ef  # type: ignore[misc]  # usearch stub: no setter
            recall = np.mean(
                [
                    len(set(index.search(q, 10).keys.tolist()) & t) / 10
                    for q, t in zip(queries, truth, strict=True)
                ]
            )
            lat = p50_ms(lambda q: index.search(q, 10, threads=1), queries)  # noqa: B023
            print(
                f"| {dtype} | {build:.1f} | {size:.1f} | {ef} | {recall:.3f} | {lat:.3f} | {numpy_p50 / lat:.1f}x |"
            )


def bench_crossover() -> None:
    rng = np.random.default_rng(SEED)
    print("\n## Exact vs HNSW by size (p50 ms, one query, f16 index)")
    print("| vectors | numpy scan | usearch exact | usearch HNSW |\n| --- | --- | --- | --- |")
    for n in (1_000, 5_000, 20_000, 50_000):
        data = unit(rng, n)
        queries = unit(rng, 100)
        index = store.new_index(DIMS)
        index.add(np.arange(n, dtype=np.uint64), data)
        a = p50_ms(lambda q: exact_topk(data, q), queries)  # noqa: B023
        b = p50_ms(lambda q: index.search(q, 10, exact=True), queries)  # noqa: B023
        c = p50_ms(lambda q: index.search(q, 10), queries)  # noqa: B023
        print(f"| {n:,} | {a:.3f} | {b:.3f} | {c:.3f} |")


def units_of(rel: str, corpus: Path) -> list[tuple[int, int, list[str], str, str]]:
    """(start, end, breadcrumb, symbol, text) per definition of a Python file of the corpus: module-level functions
    and classes, and methods, cut with Python's ast; WINDOW_LINES windows for a file without definitions."""
    src = (corpus / rel).read_text(encoding="utf-8", errors="replace")
    lines = src.splitlines()
    out: list[tuple[int, int, list[str], str, str]] = []

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, crumbs: list[str]) -> None:
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        end = node.end_lineno or node.lineno
        out.append((start, end, crumbs, crumbs[-1], "\n".join(lines[start - 1 : end])))

    try:
        tree = ast.parse(src)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in tree.body:
        if isinstance(node, defs):
            add(node, [node.name])
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, defs):
                        add(sub, [node.name, sub.name])
    if not out:
        for i in range(0, len(lines), WINDOW_LINES):
            text = "\n".join(lines[i : i + WINDOW_LINES])
            if text.strip():
                out.append((i + 1, min(len(lines), i + WINDOW_LINES), [], "", text))
    return out


def corpus_units(limit: int, corpus: Path) -> list[tuple[str, int, int, list[str], str, str]]:
    out = []
    for f in sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.py")):
        out += [(f, *u) for u in units_of(f, corpus)]
        if len(out) >= limit:
            break
    return out[:limit]


def bench_embed(backends: list[str], corpus: Path) -> None:
    from codesearch.common.doc_text import doc_text
    from codesearch.vector.embedder import Embedder

    units = corpus_units(256, corpus)
    texts = [doc_text(f, t, c, s) for f, _a, _b, c, s, t in units]
    print("\n## Embedding throughput (256 definition units of the corpus, structured doc text)")
    print(
        "| backend | load s | chunks/s | query p50 ms | cosine to torch (min / mean) |\n| --- | --- | --- | --- | --- |"
    )
    ref = None
    for b in backends:
        emb = Embedder("all-MiniLM-L6-v2", b, cache_dir=Path(tempfile.gettempdir()) / "codesearch-bench")
        if not emb.load():
            print(f"| {b} | - | unavailable: {emb.unavailable_reason[:120]} | | |")
            continue
        emb.encode_documents(texts[:8])  # warm-up
        t0 = time.perf_counter()
        vecs = emb.encode_documents(texts)
        rate = len(texts) / (time.perf_counter() - t0)
        qs = [f"query number {i} about parsing files" for i in range(20)]
        lat = float(np.median([_timed(lambda q=q, e=emb: e.encode_query(q)) for q in qs]))
        if ref is None:
            ref = vecs
        cos = np.sum(ref * vecs, axis=1)
        print(
            f"| {b} | {emb.load_seconds:.1f} | {rate:.1f} | {lat:.1f} | {cos.min():.4f} / {cos.mean():.4f} |"
        )


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def bench_reindex(files: int, corpus: Path) -> None:
    from codesearch.common.index_update import IndexBatch
    from codesearch.config import Settings
    from codesearch.v1 import common_pb2
    from codesearch.vector.service import VectorServicer

    names = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.py"))[:files]

    def indexed(rel: str, suffix: str = "") -> common_pb2.IndexedFile:
        chunks = [
            common_pb2.Chunk(
                path=rel, start_line=a, end_line=b, language="python", text=t + suffix, breadcrumb=c, symbol=s
            )
            for a, b, c, s, t in units_of(rel, corpus)
        ]
        return common_pb2.IndexedFile(path=rel, language="python", chunks=chunks[:1] + chunks[1:])

    with tempfile.TemporaryDirectory() as home:
        svc = VectorServicer(Settings.from_env({"CODESEARCH_HOME": home}), start_worker=False)
        svc.embedder.load()
        best = svc.tiers[-1]  # the tier svc.embedder serves (the transformer by default): its vectors fill in
        repo = svc.repo("bench", create=True)
        t0 = time.perf_counter()
        _, pending = repo.apply(
            IndexBatch("bench", True, 1, [indexed(n) for n in names], [], True), svc.cache
        )
        while svc._embed_step(repo, best):
            pass
        repo.save()
        full = time.perf_counter() - t0
        total = len(repo.rows)
        # edit one definition of one file (a renamed function: its embedded text changes), re-send everything
        edited = names[len(names) // 2]
        batch = [indexed(n) for n in names]
        f = batch[names.index(edited)]
        f.chunks[-1].text = f.chunks[-1].text.replace("def ", "def edited_", 1)
        before_hits, before_model = svc.cache.hits, svc.embedded_by_model
        t0 = time.perf_counter()
        _, pending = repo.apply(IndexBatch("bench", True, 2, batch, [], True), svc.cache)
        while svc._embed_step(repo, best):
            pass
        repo.save()
        re = time.perf_counter() - t0
        print(f"\n## Re-index after a one-file edit ({len(names)} files, {total} chunks)")
        print(
            f"full index: {full:.1f} s ({svc.embedded_by_model - (svc.embedded_by_model - before_model)} chunks embedded)"
        )
        print(
            f"re-index with {edited} edited: {re:.2f} s; pending after commit {pending}; "
            f"through the model {svc.embedded_by_model - before_model}; cache hits {svc.cache.hits - before_hits}; "
            f"unchanged chunks kept their vectors: {total - pending}"
        )
        svc.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, help="the standard-library corpus (embedding and re-index parts)")
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--dtypes", default="f16,f32,i8", help="usearch scalar types to compare at full size")
    ap.add_argument("--skip-crossover", action="store_true")
    ap.add_argument("--backends", default="torch,onnx-int8")
    ap.add_argument("--reindex-files", type=int, default=20)
    ap.add_argument("--skip-hnsw", action="store_true")
    ap.add_argument("--skip-embed", action="store_true")
    ap.add_argument("--skip-reindex", action="store_true")
    args = ap.parse_args(argv)
    if args.corpus is None and not (args.skip_embed and args.skip_reindex):
        ap.error("--corpus is required unless --skip-embed and --skip-reindex are given")
    if not args.skip_hnsw:
        bench_hnsw(args.vectors, args.dtypes.split(","))
    if not args.skip_crossover:
        bench_crossover()
    if not args.skip_embed:
        bench_embed(args.backends.split(","), args.corpus)
    if not args.skip_reindex:
        bench_reindex(args.reindex_files, args.corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
