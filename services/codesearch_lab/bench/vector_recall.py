"""HNSW against exact search on a repository's real embeddings, with real queries (on demand).

    python -m codesearch_lab.bench.vector_recall --index HOME/vector/REPO/gen-N/vectors-*.usearch \
        --queries ../shared/eval/semantic-dev.jsonl ../shared/eval/dev-queries.jsonl [--grow-to 100000]

Random unit vectors are HNSW's worst case; this measures the vectors the product actually searches. With
--grow-to, the real vectors are joined by synthetic neighbours until there are N: each a real vector plus noise
scaled so that it sits at the median nearest-neighbour cosine of the real set (another chunk of similar code), which
keeps the real set's clusters and density; queries stay real. Recall is reported at 10 and at the orchestrator's
leg depth (50), with exact-search latency measured in the same run as the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any

import numpy as np
from codesearch.vector import Index

K = 10  # recall@10: what a user sees
LEG_K = 50  # recall@50: what the orchestrator asks the vector leg for (search.LEG_DEPTH)
NN_SAMPLE = 1000  # real vectors whose nearest real neighbour sets the synthetic noise level
SEED = 0
SETTINGS = ((16, 64), (16, 128), (32, 128), (32, 256))  # (connectivity, expansion_search) pairs to compare


def grow(keys: np.ndarray, vectors: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The real vectors plus synthetic neighbours (see the module docstring), n in all."""
    rng = np.random.default_rng(SEED)
    sample = vectors[rng.choice(len(vectors), min(NN_SAMPLE, len(vectors)), replace=False)]
    sims = sample @ vectors.T
    sims[sims > 0.9999] = -1.0  # a vector is not its own neighbour
    nn_cos = float(np.median(sims.max(axis=1)))
    dims = vectors.shape[1]
    sigma = float(np.sqrt((1 / nn_cos**2 - 1) / dims))  # E[cos(v, v + noise)] ~ 1 / sqrt(1 + dims * sigma^2)
    extra = n - len(vectors)
    base = vectors[rng.integers(0, len(vectors), extra)]
    synth = base + rng.standard_normal((extra, dims)).astype(np.float32) * sigma
    synth /= np.linalg.norm(synth, axis=1, keepdims=True)
    achieved = float(np.median(np.sum(synth[:1000] * base[:1000], axis=1)))
    print(
        f"grown {len(vectors)} real vectors to {n}: median nearest-neighbour cosine of the real set {nn_cos:.3f}, "
        f"synthetic vectors at cosine {achieved:.3f} to their source"
    )
    new_keys = np.arange(keys.max() + 1, keys.max() + 1 + extra, dtype=np.uint64)
    return np.concatenate([keys, new_keys]), np.concatenate([vectors, synth]).astype(np.float32)


def query_model(dims: int) -> Any:
    """The configured model whose vectors the index holds: the static tier's (plain static queries) or the
    transformer's, told apart by their dimensions."""
    from codesearch.config import Settings
    from codesearch.vector.embedder import STATIC_BACKEND, Embedder

    settings = Settings.from_env()
    for name, backend in (
        (settings.static_model, STATIC_BACKEND),
        (settings.embed_model, settings.embed_backend),
    ):
        emb = Embedder(name, backend, model_cache=settings.model_cache)
        if emb.load() and emb.dims == dims:
            return emb
    raise SystemExit(f"neither the static model nor {settings.embed_model} makes {dims}-dimension vectors")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="a saved .usearch file of the vector leg")
    ap.add_argument("--queries", nargs="+", required=True, help="query JSONL files (their `query` texts)")
    ap.add_argument("--max-queries", type=int, default=300)
    ap.add_argument("--grow-to", type=int, default=0, help="add synthetic neighbours up to this many vectors")
    ap.add_argument(
        "--settings", default="", help="M:ef pairs to compare, e.g. 32:192,32:256 (default: a sweep)"
    )
    ap.add_argument("--dtype", default="f32", help="usearch scalar type of the HNSW index: f32, f16, i8")
    ap.add_argument(
        "--expansion-add", type=int, default=256, help="build-time beam (store.HNSW_EXPANSION_ADD)"
    )
    args = ap.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    saved = Index.restore(args.index, view=True)
    if saved is None:
        raise SystemExit(f"{args.index}: not a usearch index")
    keys = np.asarray(saved.keys, dtype=np.uint64)
    vectors = np.asarray(saved.get(keys), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if args.grow_to > len(vectors):
        keys, vectors = grow(keys, vectors, args.grow_to)
    texts = []
    for path in args.queries:
        with open(path, encoding="utf-8") as fh:
            texts += [json.loads(line)["query"] for line in fh if line.strip()]
    texts = texts[: args.max_queries]
    emb = query_model(vectors.shape[1])
    queries = np.stack([emb.encode_query(t) for t in texts]).astype(np.float32)
    print(f"{len(vectors)} vectors of {vectors.shape[1]} dims; {len(queries)} real queries")

    t = time.perf_counter()
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :LEG_K]
    exact_ms = []
    for q in queries:
        s = time.perf_counter()
        np.argpartition(-(vectors @ q), LEG_K)[:LEG_K]
        exact_ms.append((time.perf_counter() - s) * 1000)
    exact_p50 = statistics.median(exact_ms)
    print(f"exact numpy: p50 {exact_p50:.2f} ms/query (truth in {time.perf_counter() - t:.1f} s)")
    truth_keys = keys[truth]
    settings = (
        [tuple(int(x) for x in p.split(":")) for p in args.settings.split(",")] if args.settings else SETTINGS
    )
    built: dict[
        int, tuple[Index, float, float]
    ] = {}  # connectivity -> (index, build s, MiB): ef is per search
    for connectivity, ef in settings:
        if connectivity not in built:
            index = Index(ndim=vectors.shape[1], metric="cos", dtype=args.dtype, connectivity=connectivity,
                          expansion_add=args.expansion_add)  # fmt: skip
            t = time.perf_counter()
            index.add(keys, vectors, threads=os.cpu_count() or 1)
            build_s = time.perf_counter() - t
            with tempfile.TemporaryDirectory() as d:
                index.save(f"{d}/i.usearch")
                built[connectivity] = (index, build_s, os.path.getsize(f"{d}/i.usearch") / 2**20)
        index, build_s, size_mib = built[connectivity]
        index.expansion_search = ef  # type: ignore[misc]  # usearch stub: no setter
        recall: dict[int, list[float]] = {K: [], LEG_K: []}
        lat = []
        for q, tk in zip(queries, truth_keys, strict=True):
            s = time.perf_counter()
            m = index.search(q, LEG_K)
            lat.append((time.perf_counter() - s) * 1000)
            found = np.asarray(m.keys, dtype=np.uint64)
            for k in recall:
                recall[k].append(len(set(found[:k].tolist()) & set(tk[:k].tolist())) / k)
        p50 = statistics.median(lat)
        print(
            f"HNSW {args.dtype} M={connectivity} ef_add={args.expansion_add} ef_search={ef}: "
            f"recall@{K} {np.mean(recall[K]):.3f}, recall@{LEG_K} {np.mean(recall[LEG_K]):.3f}, p50 {p50:.3f} ms "
            f"({exact_p50 / p50:.1f}x faster than exact), build {build_s:.1f} s, {size_mib:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
