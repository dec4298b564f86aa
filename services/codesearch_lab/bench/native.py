"""Benchmark of the native core: trigram index vs ripgrep, native RRF vs the Python reference.

Usage: python -m codesearch_lab.bench.native --corpus DIR [--only-rrf]
(make the stdlib corpus with `python3 /work/shared/eval/make_corpus.py --dest /tmp/corpus/cpython-lib`).
Needs a release build of codesearch._native and `rg` on PATH.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from codesearch._native import TrigramIndex, fuse, fuse_compact
from codesearch.bench.load import percentile

T = TypeVar("T")

# Large enough that no query is truncated, so match sets compare with rg's complete output.
LIMIT = 100_000
# A typical interactive page size, timed as well.
PAGE_LIMIT = 50
# Identifiers at least this long: shorter ones are too common to be realistic queries.
MIN_IDENT_LEN = 6
IDENT_RE = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{%d,}\b" % (MIN_IDENT_LEN - 1))

REGEXES = [
    r"def \w+_cache",
    r"raise \w+Error\(",
    r"class \w+Error\(",
    r"except \w+Error as \w+:",
    r"import (os|sys)$",
    r"from \.\w+ import",
    r"self\.assert\w+\(",
    r"def __\w+__\(self",
    r"@(classmethod|staticmethod)",
    r"isinstance\(\w+, (str|bytes)\)",
    r"return None$",
    r"\bTODO\b",
    r"XXX:",
    r"os\.path\.join\(",
    r"re\.compile\(r?'",
    r"struct\.(pack|unpack)\(",
    r"_[a-z]+_lock\b",
    r"threading\.(Lock|RLock|Condition)\(",
    r"socket\.\w+\(",
    r"warnings\.warn\(",
    r"DeprecationWarning",
    r"def test_\w+",
    r"__all__ = \[",
    r"if __name__ == .__main__.:",
    r"lambda \w+: \w+\.\w+",
    r"yield from \w+",
    r"async def \w+",
    r"await \w+\.\w+\(",
    r"with open\(\w+, '[rw]b?'\)",
    r"encoding='utf-?8'",
    r"\.decode\('(ascii|latin-1|utf-8)'\)",
    r"0x[0-9a-fA-F]{8}",
    r"sys\.version_info >= \(3, \d+\)",
    r"logging\.getLogger\(",
    r"subprocess\.(run|Popen|check_output)\(",
    r"def \w+\(self, \w+=None\)",
    r"super\(\)\.__init__\(",
    r"NotImplementedError",
    r"collections\.(OrderedDict|defaultdict|namedtuple)",
    r"functools\.(wraps|partial|lru_cache)",
    r"(?i)copyright \(c\)",
    r"http://\S+",
    r"\bassert \w+ is not None",
    r"global \w+",
    r"nonlocal \w+",
    r"type\(self\)\.__name__",
    r"%s\.%s",
    r"\w+Error, \w+Error",
    r"def _\w+\(cls",
    r"time\.(monotonic|perf_counter)\(\)",
]

# The pure-Python RRF is the test oracle (tests/native/rrf_reference.py); the benchmark times the native code
# against it, so it is loaded from the checkout the benchmark runs in.
REFERENCE = Path(__file__).resolve().parents[3] / "tests" / "native" / "rrf_reference.py"


def _reference() -> Any:
    spec = importlib.util.spec_from_file_location("rrf_reference", REFERENCE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{REFERENCE} not found: run the benchmark from a source checkout")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_corpus(root: Path) -> list[tuple[str, bytes]]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                files.append((path.relative_to(root).as_posix(), path.read_bytes()))
    return files


def pick_literals(files: list[tuple[str, bytes]], n: int, seed: int) -> list[str]:
    idents = sorted({m.group().decode() for _, data in files for m in IDENT_RE.finditer(data)})
    return random.Random(seed).sample(idents, min(n, len(idents)))


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def rg_hits(args: list[str], root: Path) -> set[tuple[str, int]]:
    out = subprocess.run(["rg", "--no-heading", "-n", *args, str(root)], capture_output=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"rg failed: {out.stderr.decode(errors='replace')}")
    hits = set()
    prefix = str(root).rstrip("/") + "/"
    for line in out.stdout.split(b"\n"):
        if not line:
            continue
        path, lineno, _ = line.split(b":", 2)
        hits.add((path.decode()[len(prefix) :], int(lineno)))
    return hits


def report(name: str, index_s: list[float], page_s: list[float], rg_s: list[float]) -> None:
    p50_i, p95_i, p50_r, p95_r = (
        percentile(index_s, 0.5),
        percentile(index_s, 0.95),
        percentile(rg_s, 0.5),
        percentile(rg_s, 0.95),
    )
    print(
        f"{name}: index p50 {p50_i * 1e3:.2f} ms p95 {p95_i * 1e3:.2f} ms "
        f"(limit {PAGE_LIMIT}: p50 {percentile(page_s, 0.5) * 1e3:.2f} ms) | "
        f"rg p50 {p50_r * 1e3:.2f} ms p95 {p95_r * 1e3:.2f} ms | p50 speed-up {p50_r / p50_i:.1f}x"
    )


def bench_patterns(index: TrigramIndex, root: Path, patterns: list[str], is_regex: bool) -> None:
    """Index against rg on the same patterns (case-sensitive): latency, full scans, and the match sets."""
    kind = "regex" if is_regex else "literal"
    index_s, page_s, rg_s, full_scans, differing = [], [], [], 0, []
    for p in patterns:
        t, result = timed(partial(index.search, p, is_regex, True, LIMIT))
        index_s.append(t)
        full_scans += result.full_scan
        page_s.append(timed(partial(index.search, p, is_regex, True, PAGE_LIMIT))[0])
        t, rg = timed(partial(rg_hits, ["-e", p] if is_regex else ["-F", "--", p], root))
        rg_s.append(t)
        ours = {(m.path, m.line) for m in result.matches}
        if ours != rg:
            differing.append((p, sorted(ours - rg)[:3], sorted(rg - ours)[:3]))
    report(f"{kind} x{len(patterns)}", index_s, page_s, rg_s)
    if is_regex:
        print(f"regex full scans: {full_scans}/{len(patterns)}")
    print(f"{kind} match sets identical to rg: {len(patterns) - len(differing)}/{len(patterns)}")
    for p, only_ours, only_rg in differing[:10]:
        print(f"  differs on {p!r}: only index {only_ours}, only rg {only_rg}")


def bench_bm25(files: list[tuple[str, bytes]], dest: Path) -> None:
    """The tantivy side of the keyword index over the same corpus: chunking (graph parse) and the BM25 build."""
    from codesearch.keyword.bm25 import write
    from codesearch.keyword.store import chunk_docs
    from codesearch.orchestrator.indexed_file import make_indexed_file

    lines = sum(data.count(b"\n") for _, data in files)
    chunk_s, indexed = timed(lambda: [make_indexed_file("bench", path, data) for path, data in files])
    docs = [d for f in indexed for d in chunk_docs(f, f.content.decode("utf-8", errors="replace"))]
    build_s, count = timed(lambda: write(dest, None, docs, set()))
    size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    print(
        f"lines {lines}; chunking (tree-sitter definitions) {chunk_s:.2f} s -> {len(docs)} chunks; "
        f"tantivy BM25 build {build_s:.2f} s, {count} docs, {size / 1e6:.2f} MB on disk"
    )


def bench_rrf(seed: int, repeats: int) -> None:
    rng = random.Random(seed)
    pool = [f"pkg/module_{i // 7}.py:{i * 13 % 997}" for i in range(2500)]
    lists = [rng.sample(pool, 1000) for _ in range(4)]
    weights, k = [1.0, 0.8, 1.2, 0.5], 60.0
    ref_module = _reference()
    fuse_reference, fuse_compact_reference = ref_module.fuse_reference, ref_module.fuse_compact_reference
    assert fuse(lists, weights, k) == fuse_reference(lists, weights, k)
    assert fuse_compact(lists, weights, k) == fuse_compact_reference(lists, weights, k)

    # The minimum of many runs: the machine is shared, and preemption only ever adds time.
    def best(fn) -> float:
        return min(timed(lambda: fn(lists, weights, k))[0] for _ in range(repeats))

    native, compact = best(fuse), best(fuse_compact)
    ref, compact_ref = best(fuse_reference), best(fuse_compact_reference)
    fused = len(fuse_compact(lists, weights, k)[0])
    print(f"rrf 4x1000 ({fused} fused ids), min of {repeats} runs:")
    print(f"  fuse {native * 1e3:.3f} ms vs fuse_reference {ref * 1e3:.3f} ms: speed-up {ref / native:.1f}x")
    print(
        f"  fuse_compact {compact * 1e3:.3f} ms vs fuse_compact_reference {compact_ref * 1e3:.3f} ms "
        f"(same output): speed-up {compact_ref / compact:.1f}x"
    )
    print(
        f"  fuse_compact {compact * 1e3:.3f} ms vs fuse_reference {ref * 1e3:.3f} ms "
        f"(the fusion step the orchestrator runs): speed-up {ref / compact:.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="required unless --only-rrf")
    ap.add_argument("--literals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--rrf-repeats", type=int, default=200)
    ap.add_argument("--only-rrf", action="store_true", help="skip the trigram benchmark (no corpus needed)")
    args = ap.parse_args()
    if args.only_rrf:
        bench_rrf(args.seed, args.rrf_repeats)
        return
    if args.corpus is None:
        ap.error("--corpus is required unless --only-rrf")
    root = args.corpus.resolve()
    files = load_corpus(root)
    corpus_bytes = sum(len(d) for _, d in files)
    with tempfile.TemporaryDirectory() as tmp:
        build_s, index = timed(lambda: TrigramIndex.build(tmp, files))
        print(
            f"corpus: {len(files)} files, {corpus_bytes / 1e6:.2f} MB; build {build_s:.2f} s; "
            f"postings {index.postings_bytes() / 1e6:.2f} MB = {index.postings_bytes() / corpus_bytes:.3f}x corpus; "
            f"content store {index.content_bytes() / 1e6:.2f} MB"
        )
        open_s, index = timed(lambda: TrigramIndex.open(tmp))
        print(f"open: {open_s * 1e3:.2f} ms")
        bench_bm25(files, Path(tmp) / "bm25")
        bench_patterns(index, root, pick_literals(files, args.literals, args.seed), is_regex=False)
        bench_patterns(index, root, REGEXES, is_regex=True)
    bench_rrf(args.seed, args.rrf_repeats)


if __name__ == "__main__":
    main()
