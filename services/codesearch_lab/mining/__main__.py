"""python -m codesearch_lab.mining run | status | choose (see the package's docstring and the README's recipe)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from codesearch_lab.mining import run as mining_run
from codesearch_lab.mining import sources


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codesearch_lab.mining")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="start or resume the run (packages done are skipped)")
    r.add_argument("--out", type=Path, default=mining_run.DEFAULT_OUT)
    r.add_argument("--seed", type=int, default=mining_run.DEFAULT_SEED)
    r.add_argument(
        "--target", type=int, default=mining_run.DEFAULT_TARGET, help="pairs the ETA is counted to"
    )
    r.add_argument("--local-only", action="store_true", help="only sources already on this machine")
    r.add_argument("--fetched-only", action="store_true", help="only registry packages")
    r.add_argument("--no-block-stdlib", action="store_true", help="do not block CPython stdlib copies")
    r.add_argument("--max-units", type=int, default=0, help="stop after this many packages (0: all)")
    r.add_argument("--lists", type=Path, default=sources.PACKAGE_LISTS, help="folder of <registry>.tsv lists")
    s = sub.add_parser("status", help="print the run's progress.json")
    s.add_argument("--out", type=Path, default=mining_run.DEFAULT_OUT)
    c = sub.add_parser("choose", help="rewrite packages/*.tsv from /work/.library/env/packages")
    c.add_argument("--dest", type=Path, default=sources.PACKAGE_LISTS)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        opts = mining_run.Options(
            out=args.out, seed=args.seed, target=args.target, local=not args.fetched_only,
            fetched=not args.local_only, block_stdlib=not args.no_block_stdlib, max_units=args.max_units,
            lists=args.lists, command=["python", "-m", "codesearch_lab.mining", *(argv if argv is not None else sys.argv[1:])],
        )  # fmt: skip
        return mining_run.run(opts, log=print)
    if args.cmd == "status":
        path = args.out / "progress.json"
        if not path.is_file():
            print(f"no run in {args.out}", file=sys.stderr)
            return 1
        print(json.dumps(json.loads(path.read_text()), indent=1))
        return 0
    from codesearch_lab.mining import choose

    return choose.main(args.dest)


if __name__ == "__main__":
    sys.exit(main())
