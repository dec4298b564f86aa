"""`codesearch reranker train --repo NAME [--device cpu|cuda] [--budget-minutes N]`

Fine-tunes a gated cross-encoder (rerank/gated.py: it starts as the bundled bi-encoder) on pairs mined from an
indexed repository; the server's rerank service loads it.
The repository's source directory is asked of the server (ListRepositories), so --repo names an indexed one.
"""

from __future__ import annotations

import argparse

from codesearch.cli.client import CliError, call, channel
from codesearch.v1 import search_pb2, search_pb2_grpc


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    train = sub.add_parser("train", help="train a reranker on an indexed repository")
    train.add_argument("--repo", required=True, help="indexed repository to mine pairs from")
    train.add_argument("--path", default="", help="source directory (default: the repository's indexed root)")
    train.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    train.add_argument("--budget-minutes", type=float, default=10.0, help="training time budget")
    train.add_argument(
        "--out", default="", help="model directory (default: the data directory's rerank/model)"
    )


def run(args: argparse.Namespace) -> int:
    from codesearch.rerank import train

    path = args.path
    if not path:
        stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
        repos = call(
            args.address, lambda: stub.ListRepositories(search_pb2.ListRepositoriesRequest())
        ).repositories
        roots = {r.name: r.root for r in repos}
        if args.repo not in roots:
            raise CliError(
                f"repository {args.repo!r} is not indexed at {args.address}; index it or pass --path"
            )
        path = roots[args.repo]
    argv = [
        "--repo",
        args.repo,
        "--path",
        path,
        "--device",
        args.device,
        "--budget-minutes",
        str(args.budget_minutes),
    ]
    if args.out:
        argv += ["--out", args.out]
    return train.main(argv)
