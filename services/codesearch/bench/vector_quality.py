"""Which doc text variant retrieves best? Dense retrieval quality on the cpython dev sets, per variant.

Embedding the whole corpus is too slow on 2 cores, so the candidate pool is: every definition unit (module-level
functions and classes, and methods, cut with Python's ast; 60-line windows for files without definitions) of the
files that hold the gold answers of a fixed random sample of queries, plus the units of a fixed random sample of
other corpus files as distractors. Every variant sees the same pool and queries. Scored with the eval's own
score.py rules (MRR@10, hit@1, hit@10).

    PYTHONPATH=services python3 -m codesearch.bench.vector_quality --eval-dir EVAL --corpus DIR --queries semantic-dev.jsonl --sample 40

Measured (2 shared cores, all-MiniLM-L6-v2 torch, seed 0; see the report for the exact commands):
    PYTHONPATH=services python3 -m codesearch.bench.vector_quality --eval-dir EVAL --corpus DIR --queries semantic-dev.jsonl --sample 40 \
        --extra-files 5
    40 queries; pool: 38 gold files + 5 others = 3024 definition units
    | variant | MRR@10 | hit@1 | hit@10 |
    | raw | 0.434 | 0.300 | 0.700 |
    | header | 0.433 | 0.325 | 0.700 |
    | structured | 0.429 | 0.300 | 0.675 |
(units/s is not comparable between rows: the machine's load changed during the run.)
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from codesearch.vector.doc_text import VARIANTS, doc_text
from codesearch.vector.embedder import Embedder

WINDOW_LINES = 60  # the eval baseline's window size, for files without definitions
SEED = 0  # fixed: every variant and every run sees the same queries and distractor files
GOLD_CLASSES = (
    "semantic",
    "concept",
    "definition",
)  # span-scored classes; the file-level ones need whole files


def units_of(rel: str, corpus: Path) -> list[tuple[int, int, list[str], str, str]]:
    """(start, end, breadcrumb, symbol, text) per definition of a Python file of the corpus."""
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


def load_score_module(eval_dir: Path):
    spec = importlib.util.spec_from_file_location("eval_score", eval_dir / "score.py")
    assert spec is not None and spec.loader is not None  # a path ending in .py always has a spec and a loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--eval-dir", type=Path, required=True, help="the evaluation folder: its score.py and query files"
    )
    ap.add_argument(
        "--corpus",
        type=Path,
        required=True,
        help="the standard-library corpus (make_corpus.py of the shared evaluation folder writes one)",
    )
    ap.add_argument("--queries", default="semantic-dev.jsonl", help="query file in the eval folder")
    ap.add_argument("--sample", type=int, default=40, help="queries drawn (seeded); 0 = all")
    ap.add_argument("--extra-files", type=int, default=10, help="distractor files drawn (seeded)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--backend", default="torch", help="embedding backend: torch, onnx-int8, model2vec")
    ap.add_argument("--run-dir", default="", help="write one run file per variant here (for score.py)")
    args = ap.parse_args(argv)

    corpus: Path = args.corpus
    queries = [json.loads(line) for line in (args.eval_dir / args.queries).open()]
    queries = [q for q in queries if q["klass"] in GOLD_CLASSES]
    rng = random.Random(SEED)
    if args.sample and args.sample < len(queries):
        queries = rng.sample(queries, args.sample)
    gold_files = sorted({g["path"] for q in queries for g in q["gold"]})
    others = sorted(
        str(p.relative_to(corpus))
        for p in corpus.rglob("*.py")
        if str(p.relative_to(corpus)) not in gold_files
    )
    extra = sorted(rng.sample(others, min(args.extra_files, len(others))))
    files = gold_files + extra
    units = [(f, *u) for f in files for u in units_of(f, corpus)]
    print(
        f"{len(queries)} queries from {args.queries}; pool: {len(gold_files)} gold files + {len(extra)} others "
        f"= {len(units)} definition units",
        file=sys.stderr,
    )
    emb = Embedder(
        "all-MiniLM-L6-v2", args.backend, cache_dir=Path(tempfile.gettempdir()) / "codesearch-bench"
    )
    if not emb.load():
        print(emb.unavailable_reason, file=sys.stderr)
        return 1
    score = load_score_module(args.eval_dir)
    qvecs = np.stack([emb.encode_query(q["query"]) for q in queries])
    rows = []
    for variant in args.variants.split(","):
        texts = [doc_text(f, text, crumbs, sym, variant) for f, _s, _e, crumbs, sym, text in units]
        t0 = time.perf_counter()
        dvecs = emb.encode_documents(texts)
        secs = time.perf_counter() - t0
        sims = qvecs @ dvecs.T
        metrics = []
        run_lines = []
        for qi, q in enumerate(queries):
            top = np.argsort(-sims[qi])[:10]
            results = [
                {
                    "path": units[i][0],
                    "line": units[i][1],
                    "end_line": units[i][2],
                    "score": float(sims[qi, i]),
                }
                for i in top
            ]
            run_lines.append(json.dumps({"id": q["id"], "results": results}))
            metrics.append(score.score_one(q, {"results": results}))
        agg = score.aggregate(metrics)
        if args.run_dir:
            Path(args.run_dir).mkdir(parents=True, exist_ok=True)
            (Path(args.run_dir) / f"run-{variant}.jsonl").write_text("\n".join(run_lines) + "\n")
        rows.append((variant, agg["mrr10"], agg["hit1"], agg["hit10"], len(units) / secs))
        print(
            f"{variant:<11} {args.backend} MRR@10 {agg['mrr10']:.3f}  hit@1 {agg['hit1']:.3f}  hit@10 {agg['hit10']:.3f}  "
            f"{len(units) / secs:.1f} units/s",
            flush=True,
        )
    print("| variant | MRR@10 | hit@1 | hit@10 | units/s |\n| --- | --- | --- | --- | --- |")
    for v, m, h1, h10, ups in rows:
        print(f"| {v} | {m:.3f} | {h1:.3f} | {h10:.3f} | {ups:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
