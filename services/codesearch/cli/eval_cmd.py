"""`codesearch eval`: measure retrieval quality per query class; compare runs; plot; mine query sets.

  codesearch eval QUERIES.jsonl --repo NAME [--modes keyword,literal,regex,auto+rerank] [--rerank on,off]
                  [--baseline ripgrep --root DIR] [--out DIR] [--limit 10] [--concurrency N] [--plot out.png]
  codesearch eval QUERIES.jsonl --score RUN.jsonl [RUN2.jsonl ...] [--out DIR] [--plot out.png]
  codesearch eval --compare A.json B.json [--tolerance 0.01] [--variants] [--plot out.png]
  codesearch eval --mine REPO_DIR --out queries.jsonl [--seed N] [--per-class N]
  codesearch eval --polyglot ../shared/eval/polyglot [--modes ...] [--split held-out] [--semble-python PY ...]

Exit codes: 0 ok; 1 a compare found a worse class, or some queries failed with errors other than
INVALID_ARGUMENT; 2 bad arguments or an unusable server/repository.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import grpc

from codesearch.cli import eval_polyglot
from codesearch.config import client_address
from codesearch.eval.calibration import calibration, format_calibration
from codesearch.eval.compare import DEFAULT_TOLERANCE, find_regressions, format_comparison
from codesearch.eval.harness import (
    RepositoryNotFound,
    check_repository,
    open_channel,
    parse_variants,
    run_variant,
)
from codesearch.eval.metrics import summarize
from codesearch.eval.polyglot import PolyQuery
from codesearch.eval.polyglot_run import (
    IndexFailed,
    dump_legs,
    vector_available,
    wait_for_embeddings,
    write_jsonl,
)
from codesearch.eval.report import format_overview, format_table, load_summary, make_summary
from codesearch.eval.runfile import (
    RunRecord,
    format_tiers,
    load_queries,
    read_run,
    run_dicts,
    select_half,
    write_queries,
    write_run,
)
from codesearch.v1 import search_pb2_grpc

DEFAULT_OUT_DIR = "eval-out"
DEFAULT_LIMIT = 10  # score.py counts the first 10 results
DEFAULT_PER_CLASS = 50  # enough queries per class for MRR differences of ~0.05 to mean something
BASELINES = ("ripgrep",)


EPILOG = """\
examples:
  codesearch eval ../shared/eval/dev-queries.jsonl --repo cpython-lib --modes keyword,literal,regex --out eval-out/
  codesearch eval Q.jsonl --repo R --modes auto --rerank on,off --baseline ripgrep --root DIR --plot mrr.png
  codesearch eval --compare before/summary.json after/summary.json
  codesearch eval --mine DIR --out queries.jsonl --seed 1 --per-class 50

literal/regex modes and ripgrep search a pattern derived from the query text only: a quoted query -> the text
inside the quotes; "where is X defined", "who calls X", "usages of X", "what depends on [module] M",
"what breaks if I change M" -> X or M; anything else as typed. Regex mode sends re.escape(pattern).
ripgrep: `rg -n -F PATTERN` for those; for sentences `rg -n -i -w -F -e WORD ...` over the query's words
(stopwords and words under 3 letters dropped); every matching line is a result, in `--sort path` order.
Queries a forced mode cannot take (INVALID_ARGUMENT) count as zero results; the "inval" column counts them.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument(
        "queries", nargs="?", help="query set (JSONL, schema of ../shared/eval/dev-queries.jsonl)"
    )
    parser.add_argument("--repo", help="indexed repository to search")
    parser.add_argument(
        "--modes",
        default=None,
        help="comma-separated modes: auto, keyword, literal, regex, semantic, definition, callers, callees, "
        "impact, naive_hybrid; suffix +rerank / -rerank to force the rerank policy (default: auto, "
        "or none when --baseline is given)",
    )
    parser.add_argument(
        "--rerank", default=None, help="rerank policies to cross with every mode: on,off[,auto]"
    )
    parser.add_argument("--baseline", default="", help="comma-separated baselines to score too: ripgrep")
    parser.add_argument("--root", help="repository directory (for --baseline ripgrep)")
    parser.add_argument(
        "--out",
        default=None,
        help=f"output directory of a run (default {DEFAULT_OUT_DIR}); with --mine, the query file to write",
    )
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="results asked per query")
    parser.add_argument(
        "--half",
        choices=["tune", "check"],
        help="only one half of the query set (a stable split by query id): tune on one, report the other",
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="queries in flight (1 gives clean latencies)"
    )
    parser.add_argument("--plot", help="write per-class MRR@10 bars per mode to this PNG")
    parser.add_argument(
        "--score", nargs="+", metavar="RUN.jsonl", help="score existing run files against QUERIES"
    )
    parser.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"), help="compare two summaries")
    parser.add_argument(
        "--tolerance", type=float, default=DEFAULT_TOLERANCE, help="drop that counts as worse"
    )
    parser.add_argument("--variants", action="store_true", help="compare: also per class/variant rows")
    parser.add_argument("--mine", metavar="REPO_DIR", help="mine a query set from this repository")
    parser.add_argument("--seed", type=int, default=0, help="mine: RNG seed")
    parser.add_argument("--per-class", type=int, default=DEFAULT_PER_CLASS, help="mine: queries per class")
    eval_polyglot.add_arguments(parser)


def _err(msg: str) -> int:
    print(f"codesearch eval: {msg}", file=sys.stderr)
    return 2


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


def _progress(name: str, total: int) -> Any:
    step = max(1, total // 10)

    def report(i: int) -> None:
        if i % step == 0 or i == total:
            print(f"  {name}: {i}/{total}", file=sys.stderr, flush=True)

    return report


def run_compare(args: argparse.Namespace) -> int:
    try:
        a, b = load_summary(args.compare[0]), load_summary(args.compare[1])
    except (OSError, ValueError) as e:
        return _err(str(e))
    print(format_comparison(a, b, args.tolerance, args.variants))
    if args.plot:
        from codesearch.eval.plot import plot_mrr

        runs = {f"A:{k}": v for k, v in a.items()} | {f"B:{k}": v for k, v in b.items()}
        print(f"plot: {plot_mrr(runs, args.plot)}")
    return 1 if find_regressions(a, b, args.tolerance, args.variants) else 0


def run_mine(args: argparse.Namespace) -> int:
    from codesearch.eval.mine import mine_queries

    root = Path(args.mine)
    if not root.is_dir():
        return _err(f"--mine {root}: not a directory")
    if not args.out:
        return _err("--mine needs --out QUERIES.jsonl")
    if args.per_class < 1:
        return _err("--per-class must be at least 1")
    queries, report = mine_queries(root, seed=args.seed, per_class=args.per_class)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_queries(out, queries)
    print(report.format())
    print(f"wrote {len(queries)} queries to {out}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    if not args.queries:
        return _err("give a query file (or --compare A B, or --mine DIR)")
    if not 1 <= args.limit <= 200:
        return _err("--limit must be between 1 and 200")
    if args.concurrency < 1:
        return _err("--concurrency must be at least 1")
    baselines = [b.strip() for b in args.baseline.split(",") if b.strip()]
    for b in baselines:
        if b not in BASELINES:
            return _err(f"unknown baseline {b!r}; baselines: {', '.join(BASELINES)}")
    modes = args.modes if args.modes is not None else ("" if baselines else "auto")
    try:
        variants = parse_variants(modes, args.rerank)
        queries = select_half(load_queries(args.queries), args.half)
    except (ValueError, OSError) as e:
        return _err(str(e))
    if not variants and not baselines:
        return _err("nothing to run: give --modes or --baseline")
    if variants and not args.repo:
        return _err("--repo is required to search the server")
    if "ripgrep" in baselines and not args.root:
        return _err("--baseline ripgrep needs --root DIR (the repository's directory)")
    out_dir = Path(args.out or DEFAULT_OUT_DIR)
    out_dir.mkdir(parents=True, exist_ok=True)

    results: dict[str, list[RunRecord]] = {}
    kinds: dict[str, dict[str, Any]] = {}
    if variants:
        address = getattr(args, "address", None) or client_address()
        with open_channel(address) as channel:
            try:
                check_repository(channel, args.repo)
            except RepositoryNotFound as e:
                return _err(str(e))
            except grpc.RpcError as e:
                return _err(f"server at {address} unusable: {e.code().name}: {e.details()}")
            stub = search_pb2_grpc.SearchServiceStub(channel)
            try:  # a vector leg still embedding answers over part of the code: figures of a half-built index
                if vector_available(stub):
                    waited = wait_for_embeddings(stub, [args.repo], lambda line: print(line, file=sys.stderr))
                    print(f"  embeddings complete (waited {waited:.0f}s)", file=sys.stderr)
            except IndexFailed as e:
                return _err(str(e))
            except grpc.RpcError as e:
                return _err(f"server at {address} unusable: {e.code().name}: {e.details()}")
            for v in variants:
                print(f"running {v.name} ({len(queries)} queries) against {address}", file=sys.stderr)
                prog = _progress(v.name, len(queries))
                results[v.name] = run_variant(
                    channel, v, queries, args.repo, args.limit, args.concurrency, prog
                )
                kinds[v.name] = {
                    "kind": "search",
                    "mode": v.mode,
                    "rerank": v.rerank or "default",
                    "address": address,
                    "limit": args.limit,
                }
            if args.dump_legs:  # what codesearch_lab/offline.py replays
                print(f"dumping every leg's list for {len(queries)} queries", file=sys.stderr)
                asked = [PolyQuery(args.repo, q.id, q.query, q.klass, ()) for q in queries]
                has_vector = vector_available(search_pb2_grpc.SearchServiceStub(channel))
                dumped = dump_legs(
                    channel, asked, has_vector, args.concurrency, _progress("legs", len(asked))
                )
                write_jsonl(out_dir / "legs.jsonl", dumped)
    if "ripgrep" in baselines:
        from codesearch.eval.ripgrep import run_ripgrep

        print(f"running ripgrep over {args.root}", file=sys.stderr)
        try:
            results["ripgrep"] = run_ripgrep(
                queries, Path(args.root), args.limit, args.concurrency, _progress("ripgrep", len(queries))
            )
        except (FileNotFoundError, NotADirectoryError) as e:
            return _err(str(e))
        kinds["ripgrep"] = {"kind": "baseline", "root": str(Path(args.root).resolve())}

    runs: dict[str, dict[str, Any]] = {}
    tables: list[str] = []
    for name, records in results.items():
        run_file = out_dir / f"run-{_safe_name(name)}.jsonl"
        write_run(run_file, records)
        rows = summarize(queries, run_dicts(records))
        runs[name] = {"run_file": run_file.name, **kinds[name], "summary": rows}
        tables.append(format_table(name, rows))
        cal = calibration(queries, run_dicts(records))
        if cal is not None:
            runs[name]["calibration"] = cal
            tables.append(format_calibration(name, cal))
    tiers = format_tiers({name: run_dicts(records) for name, records in results.items()})
    summary = make_summary(args.queries, args.repo or "", runs)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    text = "\n\n".join([*tables, format_overview(runs), *([tiers] if tiers else [])])
    (out_dir / "report.txt").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\nwrote {out_dir / 'summary.json'} and {len(runs)} run file(s) in {out_dir}")
    if args.plot:
        from codesearch.eval.plot import plot_mrr

        print(f"plot: {plot_mrr(runs, args.plot)}")
    errors = sum(r["summary"]["ALL"]["errors"] for r in runs.values())
    return 1 if errors else 0


def run_score(args: argparse.Namespace) -> int:
    if not args.queries:
        return _err("--score needs the query file the runs answered")
    try:
        queries = select_half(load_queries(args.queries), args.half)
        runs: dict[str, dict[str, Any]] = {
            Path(p).stem: {"run_file": str(p), "summary": summarize(queries, read_run(p))} for p in args.score
        }
    except (OSError, ValueError, KeyError) as e:
        return _err(str(e))
    print("\n\n".join([*(format_table(n, r["summary"]) for n, r in runs.items()), format_overview(runs)]))
    if args.out:
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)
        summary = make_summary(args.queries, args.repo or "", runs)
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.plot:
        from codesearch.eval.plot import plot_mrr

        print(f"plot: {plot_mrr(runs, args.plot)}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.compare:
        return run_compare(args)
    if args.polyglot:
        return eval_polyglot.run(args)
    if args.mine:
        return run_mine(args)
    if args.score:
        return run_score(args)
    return run_eval(args)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (python -m codesearch.cli.eval_cmd); the codesearch CLI adds --address globally."""
    parser = argparse.ArgumentParser(prog="codesearch eval", description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=client_address(), help="server address HOST:PORT")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
