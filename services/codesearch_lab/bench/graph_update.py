"""Benchmark of a one-file update of the graph leg: centrality carried over vs full PageRank, in one run.

Usage: python -m codesearch_lab.bench.graph_update --corpus DIR [--repeat N]
(make the stdlib corpus with `python3 /work/shared/eval/make_corpus.py --dest /tmp/corpus/cpython-lib`).
Both variants start from the same base generation and apply the same edited file (parsed beforehand, as the
indexer's parse arrives with the update); the baseline's base lacks the staleness marker, which makes the
update recompute PageRank over the whole graph as every update did before.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from codesearch.graph.centrality_update import STALE_FILES_KEY
from codesearch.graph.store import build_generation, parse_files

from codesearch_lab.bench.keyword_update import corpus_and_repeat, edited, p50_ms


def main() -> int:
    files, repeat = corpus_and_repeat(__doc__)
    inputs = parse_files((p, "", hashlib.sha256(d).hexdigest(), d) for p, d in files)
    with tempfile.TemporaryDirectory(prefix="cs-bench-graph-") as tmp:
        root = Path(tmp)
        carried_base, full_base = root / "carried.db", root / "full.db"
        build_generation(None, carried_base, inputs, [], True, 1)
        shutil.copyfile(carried_base, full_base)
        conn = sqlite3.connect(full_base)
        conn.execute("DELETE FROM meta WHERE key = ?", (STALE_FILES_KEY,))
        conn.commit()
        conn.close()
        rounds = list(range(repeat))
        edits = {}
        for r in rounds:
            path, data = edited(files, r)
            edits[r] = parse_files([(path, "", hashlib.sha256(data).hexdigest(), data)])

        def update(base: Path) -> Callable[[int], None]:
            def run(r: int) -> None:
                out = root / f"gen-{base.stem}-{r}.db"
                build_generation(base, out, edits[r], [], False, 2)
                out.unlink()

            return run

        full = p50_ms(update(full_base), rounds)
        carried = p50_ms(update(carried_base), rounds)
        print(
            f"graph one-file update   full PageRank {full:8.1f} ms   carried over {carried:8.1f} ms"
            f"   ratio {carried / full:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
