"""`codesearch status`, `codesearch repos`, `codesearch delete NAME`"""

from __future__ import annotations

import argparse
import json

from google.protobuf.json_format import MessageToDict

from codesearch.cli.client import call, channel
from codesearch.v1 import search_pb2, search_pb2_grpc


def add_status_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


def run_status(args: argparse.Namespace) -> int:
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    s = call(args.address, lambda: stub.GetStatus(search_pb2.GetStatusRequest()))
    if args.json:
        print(json.dumps(MessageToDict(s, always_print_fields_with_no_presence=True), indent=1))
        return 0
    print(f"codesearch {s.version} at {args.address}, data in {s.data_dir}")
    for svc in s.services:
        state = "up" if svc.available else "DOWN"
        print(f"  {svc.name:<9} {state:<5} {svc.address:<22} {svc.detail}")
    print(f"{len(s.repositories)} repositories")
    for r in s.repositories:
        pending = (
            ", chunk vectors not known (the vector leg did not answer)"
            if r.embeddings_unknown
            else f", {r.embeddings_pending} chunk vectors being made in the background"
            if r.embeddings_pending
            else ""
        )
        print(
            f"  {r.name:<20} {r.files:>6} files {r.chunks:>7} chunks  v{r.index_version}  {r.indexed_at}  {r.root}{pending}"
        )
    for st in s.leg_stats:
        # The vector leg's detail names the tier answering now and each tier's progress.
        print(f"    {st.repository:<18} {st.detail:<40} items {st.items:>7}  {st.disk_bytes / 1e6:8.2f} MB")
    return 0


def add_repos_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


def run_repos(args: argparse.Namespace) -> int:
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    resp = call(args.address, lambda: stub.ListRepositories(search_pb2.ListRepositoriesRequest()))
    if args.json:
        print(json.dumps(MessageToDict(resp, always_print_fields_with_no_presence=True), indent=1))
        return 0
    for r in resp.repositories:
        print(f"{r.name}\t{r.files} files\t{r.chunks} chunks\tv{r.index_version}\t{r.root}")
    return 0


def add_delete_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name")


def run_delete(args: argparse.Namespace) -> int:
    stub = search_pb2_grpc.SearchServiceStub(channel(args.address))
    resp = call(
        args.address, lambda: stub.DeleteRepository(search_pb2.DeleteRepositoryRequest(name=args.name))
    )
    print(f"deleted {args.name}" if resp.deleted else f"{args.name} was not indexed")
    return 0
