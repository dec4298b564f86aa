"""Reranker latency: one served `Reranker.score` call (trimming, cross-encoder, blend features) per backend,
candidate count and token length, and each backend's largest logit difference from torch's.

    python -m codesearch_lab.bench.rerank [--model DIR] [--pairs 20,50] [--lengths 64,128] [--reps 5]

Latency does not depend on the weights, so without --model a fresh cross-encoder from the bundled MiniLM is
timed (saved to a temporary folder). Candidates are real code (this package's source) longer than any budget:
the worst case. The torch baseline is measured in the same run, so the ratio holds on a noisy machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from codesearch.rerank.model import RERANK_BACKENDS, Candidate, Reranker

BASE_MODEL = "all-MiniLM-L6-v2"  # the bundled transformer a fresh cross-encoder starts from

QUERY = "parse the header of an email message and return its fields"


def candidates(n: int) -> list[Candidate]:
    """n distinct code windows from this package's sources, each longer than any token budget."""
    src = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("*.py")))
    lines = src.splitlines()
    step = max(1, len(lines) // n)
    return [Candidate("\n".join(lines[i * step : i * step + 80]), "pkg/mod.py", ["Cls"]) for i in range(n)]


def timeit(fn: Callable[[], object], reps: int) -> float:
    fn()  # warm-up: first call allocates and picks kernels
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="", help="a cross-encoder folder (default: a fresh one from MiniLM)")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: every core)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pairs", default="20,50")
    ap.add_argument("--lengths", default="64,128")
    ap.add_argument("--backends", default=",".join(RERANK_BACKENDS))
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = tempfile.TemporaryDirectory()
    model = a.model
    if not model:
        from codesearch.common.models.lookup import model_path
        from sentence_transformers import CrossEncoder

        model = str(Path(tmp.name) / "fresh")
        # A fresh 1-logit head on the bundled MiniLM: its latency is any trained one's.
        fresh = CrossEncoder(
            model_path(BASE_MODEL), num_labels=1, max_length=512, device="cpu", local_files_only=True
        )
        fresh.save(model)
    backends = [b for b in a.backends.split(",") if b]
    # torch first: it is the baseline every other backend's ratio and logit difference refer to.
    backends.sort(key=lambda b: b != "torch")
    cache = [Path(tmp.name) / "cache"] if not a.model else []
    print(
        f"model={a.model or 'fresh MiniLM cross-encoder'} threads={a.threads or os.cpu_count()} reps={a.reps}"
    )
    print("(median ms per Reranker.score call; trimming, tokenising and blend features included)")
    print("| pairs | tokens | backend | ms | x faster than torch | max abs logit diff vs torch |")
    print("| --- | --- | --- | --- | --- | --- |")
    for length in (int(x) for x in a.lengths.split(",")):
        rerankers = {b: Reranker(model, length, a.threads, backend=b, cache_dirs=cache) for b in backends}
        for n in (int(x) for x in a.pairs.split(",")):
            cands = candidates(n)
            base_ms, ref = 0.0, None
            for name, rr in rerankers.items():
                ms = timeit(partial(rr.score, QUERY, cands), a.reps)
                logits = rr.logits(QUERY, rr.texts(QUERY, cands))
                if name == "torch":
                    base_ms, ref = ms, logits
                ratio = f"{base_ms / ms:.2f}" if base_ms else "-"
                diff = f"{np.abs(logits - ref).max():.4f}" if ref is not None else "-"
                print(f"| {n} | {length} | {name} | {ms:.0f} | {ratio} | {diff} |", flush=True)
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
