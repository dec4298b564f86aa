"""`codesearch eval --polyglot DIR`: the polyglot set end to end through the real server, with baselines.

codesearch eval --polyglot ../shared/eval/polyglot [--modes auto,keyword,semantic,naive_hybrid] [--rerank off,on]
                [--split held-out|fit] [--only-repo NAME ...] [--no-index] [--dump-legs]
                [--semble-python /work/venvs/semble/bin/python --semble-model DIR [--semble-bm25]]
                [--baseline-run NAME=RUN.jsonl ...] [--out DIR] [--plot PLOT_DIR]
codesearch eval --polyglot DIR --score RUN.jsonl [...]      # score run files (ours or score.py's format)

--polyglot may be given several times (the polyglot set and the blind set evaluate as one). Every report ends
with the grouped cross-validation (--folds K by repository, bootstrap intervals over repositories); --paired A B
prints the paired difference B − A of two runs, --choose A,B,... the figure of choosing among runs inside the
folds. Repositories a set keeps as its final test are left out of all of it, unless --final-test, which reads
only them (once per change that claims a gain).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc

from codesearch.config import client_address
from codesearch.eval import crossval
from codesearch.eval.crossval_report import format_choice, format_paired, format_runs
from codesearch.eval.harness import open_channel, parse_variants
from codesearch.eval.polyglot import SPLITS, PolyglotSet, load_set, merge_sets, read_run, summarize
from codesearch.eval.polyglot_latency import latency
from codesearch.eval.polyglot_report import calibration, format_report, make_summary, plot
from codesearch.eval.polyglot_run import (
    VECTOR_MODES,
    IndexFailed,
    dump_legs,
    index_repositories,
    run_mode,
    stderr_log,
    vector_available,
    wait_for_embeddings,
    write_jsonl,
)
from codesearch.eval.runfile import format_tiers
from codesearch.v1 import search_pb2_grpc

SEMBLE_SCRIPT = Path(__file__).resolve().parents[1] / "eval" / "semble_baseline.py"
SEMBLE_TIMEOUT_S = 1800.0  # semble indexes all 21 repositories in well under a minute; queries take seconds
DEFAULT_MODES_WITH_VECTOR = "auto,keyword,semantic,naive_hybrid"
DEFAULT_MODES_WITHOUT_VECTOR = "auto,keyword"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("polyglot set (--polyglot DIR)")
    g.add_argument(
        "--polyglot",
        metavar="DIR",
        action="append",
        help="a set in the polyglot format (../shared/eval/polyglot, the blind set's folder); repeatable",
    )
    g.add_argument("--folds", type=int, default=crossval.DEFAULT_FOLDS, help="cross-validation folds")
    g.add_argument("--cv-seed", type=int, default=crossval.DEFAULT_SEED, help="folds' and bootstrap's seed")
    g.add_argument("--paired", nargs=2, metavar=("BEFORE", "AFTER"), help="paired difference of two runs")
    g.add_argument("--choose", metavar="RUN,RUN,...", help="choose among these runs inside the folds")
    g.add_argument(
        "--final-test", action="store_true", help="only the final-test repositories (once per claimed gain)"
    )
    g.add_argument("--split", choices=sorted(SPLITS), help="only one half of the repository split")
    g.add_argument("--only-repo", action="append", default=[], metavar="NAME", help="only these repositories")
    g.add_argument("--no-index", action="store_true", help="the server has the repositories indexed already")
    g.add_argument("--dump-legs", action="store_true", help="also write every leg's own list per query")
    g.add_argument("--semble-python", help="python of semble's own virtualenv: run semble as a baseline")
    g.add_argument(
        "--semble-model", help="model2vec folder for semble (semble_baseline.py distill makes one)"
    )
    g.add_argument("--semble-bm25", action="store_true", help="also run semble with BM25 and ranking only")
    g.add_argument(
        "--baseline-run", action="append", default=[], metavar="NAME=RUN.jsonl", help="score a run file too"
    )


def _err(msg: str) -> int:
    print(f"codesearch eval: {msg}", file=sys.stderr)
    return 2


def _select(args: argparse.Namespace) -> PolyglotSet:
    pset = merge_sets([load_set(folder) for folder in args.polyglot])
    for problem in pset.problems:
        stderr_log(f"WARNING: left out: {problem}")
    if args.final_test:
        if not pset.final_test:
            raise ValueError("no set given keeps a final test (manifest.json 'final_test')")
        pset = pset.for_repos(pset.final_test)
    else:
        pset = pset.development()
    if args.split:
        pset = pset.for_repos(SPLITS[args.split])
    if args.only_repo:
        unknown = [r for r in args.only_repo if r not in pset.repos]
        if unknown:
            raise ValueError(f"unknown repositories {unknown}; the set has {', '.join(pset.repos)}")
        pset = pset.for_repos(args.only_repo)
    return pset


def _progress(name: str, total: int) -> Any:
    step = max(1, total // 5)

    def report(i: int) -> None:
        if i % step == 0 or i == total:
            stderr_log(f"  {name}: {i}/{total}")

    return report


def _run_semble(args: argparse.Namespace, pset: PolyglotSet, out_dir: Path, bm25: bool) -> Path:
    """semble over each set folder in turn (its script reads one folder), into one run file."""
    run_file = out_dir / ("run-semble-bm25.jsonl" if bm25 else "run-semble.jsonl")
    parts = []
    for n, folder in enumerate(pset.folders or (pset.folder,)):
        repos = [r for r, spec in pset.repos.items() if spec.root.is_relative_to(folder)]
        if not repos:
            continue
        part = run_file.with_suffix(f".part{n}.jsonl")
        cmd = [
            args.semble_python,
            str(SEMBLE_SCRIPT),
            "run",
            "--set",
            str(folder),
            "--model",
            args.semble_model,
            "--out",
            str(part),
            *(x for r in repos for x in ("--repo", r)),
        ]
        if bm25:
            cmd.append("--bm25-only")
        stderr_log(f"running semble baseline{' (BM25 + ranking only)' if bm25 else ''} over {folder} ...")
        subprocess.run(cmd, check=True, timeout=SEMBLE_TIMEOUT_S)
        parts.append(part)
    run_file.write_text("".join(p.read_text(encoding="utf-8") for p in parts), encoding="utf-8")
    for p in parts:
        p.unlink()
    return run_file


def _cross_validation(args: argparse.Namespace, pset: PolyglotSet, records: dict[str, dict[str, Any]]) -> str:
    """The grouped cross-validation tables; ValueError for a run name not among the runs."""

    def pick(name: str) -> dict[str, Any]:
        if name not in records:
            raise ValueError(f"no run named {name!r}; the runs are {', '.join(records)}")
        return records[name]

    parts = [format_runs(pset, records, args.folds, args.cv_seed)]
    if args.paired:
        before, after = args.paired
        text, _ = format_paired(pset, (before, pick(before)), (after, pick(after)), args.folds, args.cv_seed)
        parts.append(text)
    if args.choose:
        names = [n.strip() for n in args.choose.split(",") if n.strip()]
        parts.append(format_choice(pset, {n: pick(n) for n in names}, args.folds, args.cv_seed))
    return "\n\n".join(parts)


def score_run_names(paths: list[Path]) -> list[str]:
    """The name each scored run file goes by (what --paired and --choose name): its file name without `run-`,
    or, where two files share that name (before/run-auto.jsonl, after/run-auto.jsonl), its folder's name."""
    stems = [p.stem.removeprefix("run-") for p in paths]
    names = [
        p.resolve().parent.name if stems.count(stem) > 1 else stem
        for p, stem in zip(paths, stems, strict=True)
    ]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise ValueError(f"--score: two run files would both be named {clashes[0]!r}; rename one")
    return names


def run(args: argparse.Namespace) -> int:
    try:
        pset = _select(args)
    except (ValueError, OSError) as e:
        return _err(str(e))
    out_dir = Path(args.out or "eval-out")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, Any]] = {}
    if args.score:
        try:
            names = score_run_names([Path(p) for p in args.score])
            for name, p in zip(names, args.score, strict=True):
                runs[name] = {"run_file": str(p), "records": read_run(p)}
        except (OSError, ValueError) as e:
            return _err(str(e))
    else:
        code = _run_server(args, pset, out_dir, runs)
        if code:
            return code
    for spec in args.baseline_run:
        name, _, path = spec.partition("=")
        if not path:
            return _err(f"--baseline-run {spec!r}: give NAME=RUN.jsonl")
        try:
            runs[name] = {"run_file": path, "kind": "baseline", "records": read_run(path)}
        except (OSError, ValueError) as e:
            return _err(str(e))
    if args.semble_python:
        if not args.semble_model:
            return _err("--semble-python needs --semble-model DIR (semble_baseline.py distill makes one)")
        try:
            for bm25 in (False, True) if args.semble_bm25 else (False,):
                path = _run_semble(args, pset, out_dir, bm25)
                runs[path.stem.removeprefix("run-")] = {
                    "run_file": path.name,
                    "kind": "baseline",
                    "records": read_run(path),
                }
        except (OSError, subprocess.SubprocessError) as e:
            return _err(f"semble baseline failed: {e}")
    tiers = format_tiers({name: r["records"] for name, r in runs.items()})
    try:
        cv_text = _cross_validation(args, pset, {name: r["records"] for name, r in runs.items()})
    except ValueError as e:
        return _err(str(e))
    for r in runs.values():
        records = r.pop("records")
        r["summary"] = summarize(pset, records)
        cal = calibration(pset, records)
        if cal:
            r["calibration"] = cal
        lat = latency(pset, records)
        if lat:
            r["latency"] = lat
    summary = make_summary(pset, runs)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    text = format_report(runs, pset) + (f"\n\n{tiers}" if tiers else "") + f"\n\n{cv_text}"
    (out_dir / "report.txt").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\nwrote {out_dir / 'summary.json'}, {out_dir / 'report.txt'} and {len(runs)} run file(s)")
    if args.plot:
        paths = plot(runs, Path(args.plot))
        print(f"plots: {len(paths)} PNGs in {args.plot}")
    return 0


def _run_server(
    args: argparse.Namespace, pset: PolyglotSet, out_dir: Path, runs: dict[str, dict[str, Any]]
) -> int:
    address = getattr(args, "address", None) or client_address()
    with open_channel(address) as channel:
        stub = search_pb2_grpc.SearchServiceStub(channel)
        try:
            has_vector = vector_available(stub)
            modes_text = args.modes or (
                DEFAULT_MODES_WITH_VECTOR if has_vector else DEFAULT_MODES_WITHOUT_VECTOR
            )
            try:
                variants = parse_variants(modes_text, args.rerank)
            except ValueError as e:
                return _err(str(e))
            modes = [v.mode for v in variants]
            if not args.no_index:
                stderr_log(f"indexing {len(pset.repos)} repositories on {address}")
                index_repositories(stub, pset, stderr_log)
            if has_vector and (set(modes) & VECTOR_MODES or args.dump_legs):
                waited = wait_for_embeddings(stub, pset.repos, stderr_log)
                stderr_log(f"  embeddings complete (waited {waited:.0f}s)")
            for variant in variants:
                mode = variant.name
                stderr_log(f"running {mode} ({len(pset.queries)} queries)")
                lines = run_mode(
                    stub,
                    pset.queries,
                    variant,
                    args.limit,
                    args.concurrency,
                    _progress(mode, len(pset.queries)),
                )
                run_file = out_dir / f"run-{mode}.jsonl"
                write_jsonl(run_file, lines)
                runs[mode] = {
                    "run_file": run_file.name,
                    "kind": "search",
                    "address": address,
                    "records": {line["query_id"]: line for line in lines},
                }
                errors = sum(1 for line in lines if line.get("error"))
                if errors:
                    stderr_log(f"WARNING: {errors} {mode} queries failed (scored as zero results)")
            if args.dump_legs:
                stderr_log("dumping every leg's list per query")
                dumped = dump_legs(
                    channel, pset.queries, has_vector, args.concurrency, _progress("legs", len(pset.queries))
                )
                write_jsonl(out_dir / "legs.jsonl", dumped)
        except IndexFailed as e:
            return _err(str(e))
        except grpc.RpcError as e:
            return _err(f"server at {address} unusable: {e.code().name}: {e.details()}")
    return 0
