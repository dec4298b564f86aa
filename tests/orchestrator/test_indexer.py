"""The indexer hands a C-family file the project's macro table (its headers' `#define`s), so a definition behind
an attribute macro gets its own name; its parse workers index what one process indexes. Real servers on
127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
from codesearch.common.process_pool import MIN_FILES
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import graph_pb2, graph_pb2_grpc, search_pb2, search_pb2_grpc

HEADER = b"#define LIB_NULLABLE _Nullable\n#define LIB_GUARDED_BY(x) __attribute__((guarded_by(x)))\n"
SOURCE = (
    b'#include "lib/attrs.h"\n'
    b"std::vector<int>* callbacks\n    LIB_GUARDED_BY(Mutex()) = nullptr;\n"
    b"char* LIB_NULLABLE DecodeName(int options) { return Helper(options); }\n"
)


def _names(address: str, name: str) -> set[str]:
    graph = graph_pb2_grpc.GraphServiceStub(grpc.insecure_channel(address))
    found = graph.FindDefinitions(graph_pb2.FindDefinitionsRequest(name=name, limit=10), timeout=30)
    return {s.name for s in found.symbols}


def test_a_definition_behind_a_project_macro_has_its_own_name(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "attrs.h").write_bytes(HEADER)
    (root / "decode.cc").write_bytes(SOURCE)
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = ThreadedServer(registrars(settings, ("keyword", "graph", "orchestrator"))).start()
    try:
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        request = search_pb2.IndexRepositoryRequest(path=str(root), name="repo")
        list(stub.IndexRepository(request, timeout=120))
        # Without the table the grammar reads `LIB_NULLABLE DecodeName` as the declarator's name.
        assert "DecodeName" in _names(server.address, "DecodeName")
    finally:
        server.stop()


def _index_and_read(root: Path, home: Path, workers: str) -> tuple[int, set[str], list[tuple[str, int]]]:
    """Index `root` into a fresh home with CODESEARCH_INDEX_WORKERS=workers: (chunks, definitions, a search)."""
    settings = Settings.from_env({"CODESEARCH_HOME": str(home), "CODESEARCH_INDEX_WORKERS": workers})
    server = ThreadedServer(registrars(settings, ("keyword", "graph", "orchestrator"))).start()
    try:
        stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
        request = search_pb2.IndexRepositoryRequest(path=str(root), name="repo")
        last = list(stub.IndexRepository(request, timeout=120))[-1]
        found = stub.Search(search_pb2.SearchRequest(query="handler_7", limit=20), timeout=30)
        hits = [(h.location.path, h.location.start_line) for h in found.hits]
        return last.chunks, _names(server.address, "DecodeName") | _names(server.address, "handler_7"), hits
    finally:
        server.stop()


def test_worker_processes_index_what_one_process_indexes(tmp_path: Path) -> None:
    """A run large enough for the parse workers (process_pool.MIN_FILES) gives the index a single process gives,
    the project's macro table included."""
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "attrs.h").write_bytes(HEADER)
    (root / "decode.cc").write_bytes(SOURCE)
    for i in range(MIN_FILES + 6):
        (root / f"mod_{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef handler_{i}(event):\n    return handler_{(i + 1) % 7}(event)\n'
        )
    pooled = _index_and_read(root, tmp_path / "pooled", "2")
    single = _index_and_read(root, tmp_path / "single", "1")
    assert pooled == single
    chunks, names, hits = pooled
    assert chunks >= MIN_FILES and {"DecodeName", "handler_7"} <= names and hits
