"""Benchmark of a one-file update of the keyword leg: incremental (base generation + the file) vs full rebuild.

Usage: python -m codesearch_lab.bench.keyword_update --corpus DIR [--repeat N]
(make the stdlib corpus with `python3 /work/shared/eval/make_corpus.py --dest /tmp/corpus/cpython-lib`).
Two levels, each timed incremental and full in the same run, alternating, and printed as a ratio:
the native trigram index alone (`TrigramIndex.build` with and without a base), and the whole keyword
generation (`keyword.store.apply_batch`: BM25 + trigram + file table, replace_all vs one changed file).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codesearch import _native
from codesearch.common.index_update import IndexBatch
from codesearch.common.snapshot import SnapshotDir
from codesearch.keyword.store import apply_batch
from codesearch.v1 import common_pb2

from codesearch_lab.bench.native import load_corpus

# Lines per BM25 chunk in this bench: the size of a typical function-level chunk; the bench compares
# incremental with full writes of the same chunks, so the chunker itself is left out.
CHUNK_LINES = 50


def indexed_file(path: str, data: bytes) -> common_pb2.IndexedFile:
    lines = data.decode("utf-8", errors="replace").splitlines()
    chunks = [
        common_pb2.Chunk(
            path=path,
            start_line=start + 1,
            end_line=min(start + CHUNK_LINES, len(lines)),
            text="\n".join(lines[start : start + CHUNK_LINES]),
        )
        for start in range(0, max(len(lines), 1), CHUNK_LINES)
    ]
    return common_pb2.IndexedFile(
        path=path, content=data, content_hash=hashlib.sha256(data).hexdigest(), chunks=chunks
    )


def edited(files: list[tuple[str, bytes]], round_: int) -> tuple[str, bytes]:
    """A different file each round, with a line appended (what a saved edit looks like)."""
    path, data = files[(round_ * 37) % len(files)]
    return path, data + f"\n# edited in round {round_}\n".encode()


def p50_ms(fn: Callable[[int], object], rounds: list[int]) -> float:
    times = []
    for r in rounds:
        t0 = time.perf_counter()
        fn(r)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def corpus_and_repeat(doc: str) -> tuple[list[tuple[str, bytes]], int]:
    """The update benches' command line (--corpus DIR [--repeat N]): the corpus's files and the rounds."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    files = load_corpus(args.corpus)
    total_mb = sum(len(d) for _, d in files) / 1e6
    print(f"corpus: {len(files)} files, {total_mb:.1f} MB; {args.repeat} rounds each, p50")
    return files, int(args.repeat)


def main() -> int:
    files, repeat = corpus_and_repeat(__doc__)
    with tempfile.TemporaryDirectory(prefix="cs-bench-update-") as tmp:
        root = Path(tmp)
        base_dir = root / "base"
        base_dir.mkdir()
        base = _native.TrigramIndex.build(str(base_dir), files)
        counter = iter(range(10**9))

        def fresh_dir() -> str:
            d = root / f"t{next(counter)}"
            d.mkdir()
            return str(d)

        def trigram_full(r: int) -> None:
            path, data = edited(files, r)
            _native.TrigramIndex.build(fresh_dir(), [(p, data if p == path else d) for p, d in files])

        def trigram_incremental(r: int) -> None:
            _native.TrigramIndex.build(fresh_dir(), [edited(files, r)], base)

        rounds = list(range(repeat))
        full = p50_ms(trigram_full, rounds)
        inc = p50_ms(trigram_incremental, rounds)
        print(
            f"trigram index   full rebuild {full:8.1f} ms   incremental {inc:8.1f} ms   ratio {inc / full:.3f}"
        )

        snapdir = SnapshotDir(root / "keyword")
        all_files = [indexed_file(p, d) for p, d in files]
        apply_batch(snapdir, IndexBatch("bench", True, 1, all_files))

        def keyword_full(r: int) -> None:
            path, data = edited(files, r)
            batch = [indexed_file(path, data) if f.path == path else f for f in all_files]
            apply_batch(snapdir, IndexBatch("bench", True, 1, batch))

        def keyword_incremental(r: int) -> None:
            apply_batch(snapdir, IndexBatch("bench", False, 1, [indexed_file(*edited(files, r))]))

        full = p50_ms(keyword_full, rounds)
        inc = p50_ms(keyword_incremental, rounds)
        print(
            f"keyword gen.    full rebuild {full:8.1f} ms   incremental {inc:8.1f} ms   ratio {inc / full:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
