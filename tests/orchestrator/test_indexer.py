"""The indexer hands a C-family file the project's macro table (its headers' `#define`s), so a definition behind
an attribute macro gets its own name. Real servers on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import grpc
from codesearch.common.aio_thread import ThreadedServer
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
