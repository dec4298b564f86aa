"""The vector leg's tiers head to head, in one run (on demand, not a test):

    PYTHONPATH=services python3 -m codesearch_lab.bench.tiers --corpus DIR [--static-chunks 4000] [--transformer-chunks 300]

On real definition units of the standard-library corpus (structured doc text, as indexed): documents embedded
per second by each tier and their ratio, query embedding p50/p99 (distinct queries: no cache hits), and vector
memory per chunk (the usearch index of each tier's vectors: vectors plus graph, per chunk), and the static tier's
boosted query (the transformer's query mapped into the static space, vector/query_boost.py) against its own, and
`semantic` mode's token late interaction over a search's 50 candidates (vector/late_interaction.py) against the
search alone: tokenising the candidates each time (a cold token cache) and from their cached token ids.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from codesearch.common.doc_text import doc_text
from codesearch.config import DEFAULT_STATIC_QUERY_WEIGHT, Settings
from codesearch.orchestrator.plan import LEG_DEPTH  # the candidates `semantic` mode re-scores
from codesearch.vector import tiers
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.late_interaction import texts_f1, token_f1
from codesearch.vector.query_boost import QueryBooster
from codesearch.vector.tier_index import HNSW_EXPANSION_ADD, STATIC_EXPANSION_ADD, Index, new_index
from codesearch.vector.tier_models import shared_embedder

from codesearch_lab.bench.vector import units_of

QUERIES = 300  # distinct queries per tier: enough for a p99
WARMUP_TEXTS = 16  # first calls allocate and fill caches


def corpus_texts(limit: int, corpus: Path) -> list[str]:
    texts: list[str] = []
    for rel in sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.py")):
        units = units_of(rel, corpus)
        texts += [doc_text(rel, text, crumbs, symbol) for _a, _b, crumbs, symbol, text in units]
        if len(texts) >= limit:
            break
    return texts[:limit]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus",
        type=Path,
        required=True,
        help="the standard-library corpus (make_corpus.py of the shared evaluation folder writes one)",
    )
    ap.add_argument("--static-chunks", type=int, default=4000)
    ap.add_argument("--transformer-chunks", type=int, default=300)
    ap.add_argument(
        "--other-static",
        default="",
        help="another static model (e.g. all-MiniLM-L6-v2+code) timed on the same chunks, as a ratio to the configured one",
    )
    args = ap.parse_args(argv)
    settings = Settings.from_env()
    texts = corpus_texts(max(args.static_chunks, args.transformer_chunks), args.corpus)
    sizes = {tiers.STATIC: args.static_chunks, tiers.TRANSFORMER: args.transformer_chunks}
    beams = {tiers.STATIC: STATIC_EXPANSION_ADD, tiers.TRANSFORMER: HNSW_EXPANSION_ADD}
    rates: dict[str, float] = {}
    query_p50: dict[str, float] = {}
    print(f"corpus {args.corpus}: {len(texts)} definition units")
    print(
        "| tier | model | dims | chunks | chunks/s | query p50 ms | query p99 ms | search p50 ms | "
        "index bytes/chunk |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [(tier, shared_embedder(settings, tier)) for tier in tiers.TIERS]
    measured: dict[
        str, tuple[float, float, float, float]
    ] = {}  # chunks/s, query p50, search p50, bytes/chunk
    for tier, emb in rows:
        if not emb.load():
            print(f"| {tier} | unavailable: {emb.unavailable_reason[:120]} | | | | | | | |")
            continue
        emb.encode_documents(texts[:WARMUP_TEXTS])
        part = texts[: sizes.get(tier, args.static_chunks)]
        t0 = time.perf_counter()
        vecs = emb.encode_documents(part)
        rates[tier] = len(part) / (time.perf_counter() - t0)
        encode: Callable[[str], np.ndarray] = emb.encode_query
        lat = query_latencies(encode, tier)
        query_p50[tier] = float(np.percentile(lat, 50))
        index = new_index(emb.dims, beams.get(tier, STATIC_EXPANSION_ADD))
        index.add(np.arange(len(vecs), dtype=np.uint64), vecs)
        per_chunk = index.memory_usage / len(vecs)
        search_p50 = search_latency(index, encode, tier)
        measured[tier] = (rates[tier], query_p50[tier], search_p50, per_chunk)
        if tier == tiers.STATIC:
            late_cost = late_interaction_cost(emb, index, part)
        print(
            f"| {tier} | {emb.model_id} | {emb.dims} | {len(part)} | {rates[tier]:,.0f} | "
            f"{query_p50[tier]:.3f} | {np.percentile(lat, 99):.3f} | {search_p50:.3f} | {per_chunk:,.0f} |"
        )
    if tiers.STATIC in rates and tiers.TRANSFORMER in rates:
        print(f"static / transformer chunks/s: {rates[tiers.STATIC] / rates[tiers.TRANSFORMER]:.0f}x")
        boosted_query(settings, query_p50[tiers.STATIC])
    if args.other_static and tiers.STATIC in rates:
        other_static(settings, args.other_static, texts[: args.static_chunks], rates[tiers.STATIC])
    if tiers.STATIC in measured:
        search, cold, warm = late_cost
        print(
            f"late interaction over {LEG_DEPTH} candidates: search p50 {search:.3f} ms, + F tokenising them "
            f"{cold:.3f} ms ({cold / search:.1f}x the search), + F from cached token ids {warm:.3f} ms "
            f"({warm / search:.1f}x)"
        )
    return 0


def other_static(settings: Settings, name: str, texts: list[str], configured_rate: float) -> None:
    """Chunks/s and query p50 of another static model on the same chunks, beside the configured one's."""
    emb = Embedder(name, STATIC_BACKEND, model_cache=settings.model_cache)
    if not emb.load():
        print(f"static {name}: unavailable: {emb.unavailable_reason[:160]}")
        return
    emb.encode_documents(texts[:WARMUP_TEXTS])
    t0 = time.perf_counter()
    emb.encode_documents(texts)
    rate = len(texts) / (time.perf_counter() - t0)
    p50 = float(np.percentile(query_latencies(emb.encode_query, f"other {name}"), 50))
    print(
        f"static {emb.model_id}: {len(texts)} chunks, {rate:,.0f} chunks/s "
        f"({rate / configured_rate:.2f}x the configured static model), query p50 {p50:.3f} ms"
    )


def late_interaction_cost(emb: Embedder, index: Index, texts: list[str]) -> tuple[float, float, float]:
    """p50 milliseconds of a 50-candidate search, of F over its candidates' texts, and of F from their token ids
    (what the stage costs with a cold and a warm token cache; reading the chunk table is not included)."""
    encoder = emb.static_encoder()
    ids = [np.unique(i).astype(np.int32) for i in encoder.token_ids(texts)]
    search, cold, warm = [], [], []
    for i in range(QUERIES):
        text = f"how does the code number {i} clean up temporary files"
        q = emb.encode_query(text)
        t0 = time.perf_counter()
        found = index.search(q, LEG_DEPTH).keys
        t1 = time.perf_counter()
        texts_f1(encoder, text, [texts[int(k)] for k in found])
        t2 = time.perf_counter()
        token_f1(encoder, text, [ids[int(k)] for k in found])
        t3 = time.perf_counter()
        search.append((t1 - t0) * 1000)
        cold.append((t2 - t1) * 1000)
        warm.append((t3 - t2) * 1000)
    p50 = [float(np.percentile(x, 50)) for x in (search, cold, warm)]
    return p50[0], p50[1], p50[2]


def search_latency(index: Index, encode: Callable[[str], np.ndarray], tag: str) -> float:
    """p50 milliseconds of a top-10 search of the index (the queries embedded first)."""
    queries = [encode(f"how does the {tag} code number {i} handle errors") for i in range(QUERIES)]
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, 10)
        lat.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(lat, 50))


def query_latencies(encode: Callable[[str], np.ndarray], tag: str) -> list[float]:
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
