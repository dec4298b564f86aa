"""How soon a saved edit is searchable in a watched directory, against a manual full re-index in the same run.

    python -m codesearch_lab.bench.freshness --corpus /tmp/corpus/cpython-lib [--edits 10]

The corpus is copied to a temporary directory (never edited in place) and served by a real server in this
process with the keyword, graph and orchestrator services: the vector leg's embeddings (~23 chunks/s on 2 cores
before the static tier) would measure the embedder, not freshness; the edit is found by literal search.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from codesearch.v1 import search_pb2, search_pb2_grpc

from codesearch_lab.bench.local import local_server

SERVICES = ("keyword", "graph", "orchestrator")
POLL_S = 0.005  # how often the client asks whether the edit is searchable: well under the figure measured
SETTLE_TIMEOUT_S = 120.0  # one full run of the standard library on 2 busy cores takes ~10 s


def _wait(check: Callable[[], bool], what: str) -> float:
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > SETTLE_TIMEOUT_S:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(POLL_S)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="directory to copy and watch")
    parser.add_argument("--edits", type=int, default=10, help="edits measured per method")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codesearch-freshness-") as tmp:
        root, plain = Path(tmp) / "tree", Path(tmp) / "plain"  # watched; re-indexed by hand
        shutil.copytree(args.corpus, root, symlinks=True)
        shutil.copytree(args.corpus, plain, symlinks=True)
        with local_server(Path(tmp) / "home", SERVICES) as stub:
            return _measure(stub, root, plain, args.edits)


def _measure(stub: search_pb2_grpc.SearchServiceStub, root: Path, plain: Path, edits: int) -> int:
    def version() -> int:
        records = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
        return next(int(r.index_version) for r in records if r.name == "tree")

    def version_above(previous: int) -> bool:
        return version() > previous

    def searchable(marker: str, repository: str) -> bool:
        request = search_pb2.SearchRequest(
            query=marker,
            mode=search_pb2.SEARCH_MODE_LITERAL,
            case_sensitive=True,
            no_cache=True,
            repositories=[repository],
        )
        return bool(stub.Search(request).hits)

    def edit(path: Path) -> str:
        marker = f"FRESHNESS_{uuid.uuid4().hex}"
        with path.open("a") as fh:
            fh.write(f"\n# {marker}\n")
        return marker

    started = time.monotonic()
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="tree", watch=True)))
    _wait(lambda: version() >= 2, "the watcher's first run")  # its own full run, right after ours
    print(f"indexed and watching {root} in {time.monotonic() - started:.1f}s")
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(plain), name="plain")))

    watched = []
    for path in sorted(root.rglob("*.py"))[:edits]:
        before = version()
        marker = edit(path)
        watched.append(_wait(functools.partial(searchable, marker, "tree"), "a watched edit"))
        _wait(functools.partial(version_above, before), "the run to finish")
    manual = []
    for path in sorted(plain.rglob("*.py"))[:edits]:
        marker = edit(path)
        t0 = time.monotonic()
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(plain), name="plain")))
        _wait(functools.partial(searchable, marker, "plain"), "a manually re-indexed edit")
        manual.append(time.monotonic() - t0)
    for name, figures in (("watched (changed paths only)", watched), ("manual full re-index", manual)):
        print(
            f"{name:<30} edit -> searchable: p50 {statistics.median(figures) * 1000:7.0f} ms, "
            f"max {max(figures) * 1000:7.0f} ms over {len(figures)} edits"
        )
    print(f"ratio watched/manual (p50): {statistics.median(watched) / statistics.median(manual):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
