"""HNSW against exact search on a repository's real embeddings, with real queries (on demand).

    python -m codesearch.vector.bench_recall --index HOME/vector/REPO/gen-N/vectors-*.usearch \
        --queries ../shared/eval/semantic-dev.jsonl ../shared/eval/dev-queries.jsonl

Random unit vectors are HNSW's worst case; this measures the vectors the product actually searches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
from usearch.index import Index

K = 10  # recall@10, as the orchestrator asks each leg for its top hits
SETTINGS = ((16, 64), (16, 128), (32, 128), (32, 256))  # (connectivity, expansion_search) pairs to compare


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="a saved .usearch file of the vector leg")
    ap.add_argument("--queries", nargs="+", required=True, help="query JSONL files (their `query` texts)")
    ap.add_argument("--max-queries", type=int, default=300)
    args = ap.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from codesearch.vector.embedder import Embedder

    saved = Index.restore(args.index, view=True)
    keys = np.asarray(saved.keys, dtype=np.uint64)
    vectors = np.asarray(saved.get(keys), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = []
    for path in args.queries:
        with open(path, encoding="utf-8") as fh:
            texts += [json.loads(line)["query"] for line in fh if line.strip()]
    texts = texts[: args.max_queries]
    emb = Embedder("all-MiniLM-L6-v2")
    emb.load()
    queries = np.stack([emb.encode_query(t) for t in texts]).astype(np.float32)
    print(f"{len(vectors)} vectors of {vectors.shape[1]} dims; {len(queries)} real queries")

    t = time.perf_counter()
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :K]
    exact_ms = []
    for q in queries:
        s = time.perf_counter()
        np.argpartition(-(vectors @ q), K)[:K]
        exact_ms.append((time.perf_counter() - s) * 1000)
    print(
        f"exact numpy: p50 {statistics.median(exact_ms):.2f} ms/query (truth in {time.perf_counter() - t:.1f} s)"
    )
    truth_keys = keys[truth]
    for connectivity, ef in SETTINGS:
        index = Index(ndim=vectors.shape[1], metric="cos", dtype="f32", connectivity=connectivity,
                      expansion_add=128, expansion_search=ef)  # fmt: skip
        t = time.perf_counter()
        index.add(keys, vectors, threads=os.cpu_count() or 1)
        build_s = time.perf_counter() - t
        lat = []
        found = []
        for q in queries:
            s = time.perf_counter()
            m = index.search(q, K)
            lat.append((time.perf_counter() - s) * 1000)
            found.append(np.asarray(m.keys, dtype=np.uint64))
        recall = float(np.mean([len(set(f) & set(tk)) / K for f, tk in zip(found, truth_keys, strict=True)]))
        print(
            f"HNSW M={connectivity} ef_search={ef}: recall@{K} {recall:.3f}, p50 {statistics.median(lat):.3f} ms, "
            f"build {build_s:.1f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
