"""The vector leg's tiers head to head, in one run (on demand, not a test):

    PYTHONPATH=services python3 -m codesearch.bench.tiers [--static-chunks 4000] [--transformer-chunks 300]

On real definition units of the standard-library corpus (structured doc text, as indexed): documents embedded
per second by each tier and their ratio, query embedding p50/p99 (distinct queries: no cache hits), and vector
memory per chunk (the usearch index of each tier's vectors: vectors plus graph, per chunk), and the static tier's
boosted query (the transformer's query mapped into the static space, vector/query_boost.py) against its own.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from codesearch.bench.vector_quality import CORPUS, units_of
from codesearch.config import DEFAULT_STATIC_QUERY_WEIGHT, Settings
from codesearch.vector import tiers
from codesearch.vector.doc_text import doc_text
from codesearch.vector.query_boost import QueryBooster
from codesearch.vector.tier_index import HNSW_EXPANSION_ADD, STATIC_EXPANSION_ADD, new_index
from codesearch.vector.tier_models import shared_embedder

QUERIES = 300  # distinct queries per tier: enough for a p99
WARMUP_TEXTS = 16  # first calls allocate and fill caches


def corpus_texts(limit: int) -> list[str]:
    texts: list[str] = []
    for rel in sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.py")):
        texts += [doc_text(rel, text, crumbs, symbol) for _a, _b, crumbs, symbol, text in units_of(rel)]
        if len(texts) >= limit:
            break
    return texts[:limit]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--static-chunks", type=int, default=4000)
    ap.add_argument("--transformer-chunks", type=int, default=300)
    args = ap.parse_args(argv)
    settings = Settings.from_env()
    texts = corpus_texts(max(args.static_chunks, args.transformer_chunks))
    sizes = {tiers.STATIC: args.static_chunks, tiers.TRANSFORMER: args.transformer_chunks}
    beams = {tiers.STATIC: STATIC_EXPANSION_ADD, tiers.TRANSFORMER: HNSW_EXPANSION_ADD}
    rates: dict[str, float] = {}
    query_p50: dict[str, float] = {}
    print(f"corpus {CORPUS}: {len(texts)} definition units")
    print("| tier | model | dims | chunks | chunks/s | query p50 ms | query p99 ms | index bytes/chunk |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for tier in tiers.TIERS:
        emb = shared_embedder(settings, tier)
        if not emb.load():
            print(f"| {tier} | unavailable: {emb.unavailable_reason[:120]} | | | | | | |")
            continue
        emb.encode_documents(texts[:WARMUP_TEXTS])
        part = texts[: sizes[tier]]
        t0 = time.perf_counter()
        vecs = emb.encode_documents(part)
        rates[tier] = len(part) / (time.perf_counter() - t0)
        lat = query_latencies(emb.encode_query, tier)
        query_p50[tier] = float(np.percentile(lat, 50))
        index = new_index(emb.dims, beams[tier])
        index.add(np.arange(len(vecs), dtype=np.uint64), vecs)
        per_chunk = index.memory_usage / len(vecs)
        print(
            f"| {tier} | {emb.model_id} | {emb.dims} | {len(part)} | {rates[tier]:,.0f} | "
            f"{query_p50[tier]:.3f} | {np.percentile(lat, 99):.3f} | {per_chunk:,.0f} |"
        )
    if len(rates) == 2:
        print(f"static / transformer chunks/s: {rates[tiers.STATIC] / rates[tiers.TRANSFORMER]:.0f}x")
        boosted_query(settings, query_p50[tiers.STATIC])
    return 0


def query_latencies(encode: Callable[[str], object], tag: str) -> list[float]:
    """Milliseconds per distinct query (no cache hits: each text is new to every model's query cache)."""
    lat = []
    for i in range(QUERIES):
        q = f"how does the {tag} code number {i} parse and validate its input files"
        t0 = time.perf_counter()
        encode(q)
        lat.append((time.perf_counter() - t0) * 1000)
    return lat


def boosted_query(settings: Settings, static_p50: float) -> None:
    """The static tier's boosted query (vector/query_boost.py): one transformer pass, the map, the static query."""
    static = shared_embedder(settings, tiers.STATIC)
    booster = QueryBooster(
        static,
        shared_embedder(settings, tiers.TRANSFORMER),
        settings.static_query_map,
        settings.static_query_weight or DEFAULT_STATIC_QUERY_WEIGHT,
    )
    booster.prepare()
    if not booster.ready:
        print(f"boosted static query: {booster.off_reason}")
        return
    lat = query_latencies(booster.encode, "boosted")
    p50 = float(np.percentile(lat, 50))
    print(
        f"static query p50 {static_p50:.3f} ms, boosted ({booster.encoder}) p50 {p50:.3f} ms, "
        f"p99 {np.percentile(lat, 99):.3f} ms: {p50 / static_p50:.0f}x"
    )


if __name__ == "__main__":
    raise SystemExit(main())
