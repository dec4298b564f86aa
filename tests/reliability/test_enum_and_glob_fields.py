"""Every RPC's enum and glob fields, set to what a hostile client sends: never INTERNAL or UNKNOWN.

proto3 enums are open (an undefined number such as 99 or -7 arrives as it is) and a glob can be malformed (a lone
backslash). The test walks the descriptors of the services a model-free server hosts, so a field added later is
walked too: each unary or server-streaming method, each enum field of its request (99, -7) and each field whose
name ends in `glob` (a lone backslash), one at a time, over a real indexed repository.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import graph_pb2, keyword_pb2, search_pb2, search_pb2_grpc
from google.protobuf import descriptor, message_factory

HOSTILE_ENUMS = (99, -7)
HOSTILE_GLOBS = ("\\",)
REFUSED = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
CALL_DEADLINE_S = 20.0
SERVICES = ("keyword", "graph", "orchestrator")  # the legs that need no model
# Fields a request needs to reach its enum and glob checks (a query to search with, the repository).
BASE_FIELDS = {
    "query": "parse",
    "pattern": "parse",
    "symbol": "parse",
    "repository": "repo",
    "name": "parse",
    "target": "a.py",
}


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from codesearch.common.aio_thread import ThreadedServer

    tmp = tmp_path_factory.mktemp("enums")
    server = ThreadedServer(
        registrars(Settings.from_env({"CODESEARCH_HOME": str(tmp / "home")}), SERVICES)
    ).start()
    root = tmp / "repo"
    root.mkdir()
    (root / "a.py").write_text("def parse(x):\n    return x\n\n\nparse(1)\n")
    with grpc.insecure_channel(server.address) as ch:
        stub = search_pb2_grpc.SearchServiceStub(ch)
        list(
            stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="repo"), timeout=120)
        )
        yield ch
    server.stop()


def _cases() -> list[tuple[str, Any, str, Any]]:
    """(method path, request class, field, hostile value) for every enum and glob field of every request."""
    out: list[tuple[str, Any, str, Any]] = []
    for module in (search_pb2, keyword_pb2, graph_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                if method.client_streaming:
                    continue
                request_cls = message_factory.GetMessageClass(method.input_type)
                path = f"/{service.full_name}/{method.name}"
                for field in method.input_type.fields:
                    if field.type == descriptor.FieldDescriptor.TYPE_ENUM and not _repeated(field):
                        out += [(path, request_cls, field.name, v) for v in HOSTILE_ENUMS]
                    elif field.name.endswith("glob") and field.type == descriptor.FieldDescriptor.TYPE_STRING:
                        out += [(path, request_cls, field.name, v) for v in HOSTILE_GLOBS]
    return out


def _repeated(field: descriptor.FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def _request(request_cls: Any, field: str, value: Any) -> Any:
    request = request_cls()
    for name, base in BASE_FIELDS.items():
        f = request.DESCRIPTOR.fields_by_name.get(name)
        if f is not None and f.type == descriptor.FieldDescriptor.TYPE_STRING and not _repeated(f):
            setattr(request, name, base)
    repos = request.DESCRIPTOR.fields_by_name.get("repositories")
    if repos is not None and repos.type == descriptor.FieldDescriptor.TYPE_STRING:
        request.repositories.append("repo")
    setattr(request, field, value)
    return request


CASES = _cases()


def test_the_walk_finds_the_fields_that_were_reported() -> None:
    walked = {(p.rsplit("/", 1)[1], f) for p, _, f, _ in CASES}
    for method, field in [("StreamSearch", "mode"), ("Search", "mode"), ("Grep", "path_glob"),
                          ("StreamGrep", "path_glob"), ("KeywordSearch", "path_glob")]:  # fmt: skip
        assert (method, field) in walked


@pytest.mark.parametrize(("path", "request_cls", "field", "value"), CASES, ids=lambda x: str(x)[-40:])
def test_hostile_enum_or_glob_is_never_internal(
    channel: Any, path: str, request_cls: Any, field: str, value: Any
) -> None:
    request = _request(request_cls, field, value)
    method = next(
        m
        for module in (search_pb2, keyword_pb2, graph_pb2)
        for s in module.DESCRIPTOR.services_by_name.values()
        for m in s.methods
        if f"/{s.full_name}/{m.name}" == path
    )
    response_cls = message_factory.GetMessageClass(method.output_type)
    kind = channel.unary_stream if method.server_streaming else channel.unary_unary
    call = kind(
        path, request_serializer=request_cls.SerializeToString, response_deserializer=response_cls.FromString
    )
    try:
        answer = call(request, timeout=CALL_DEADLINE_S)
        if method.server_streaming:
            list(answer)
    except grpc.RpcError as e:
        assert e.code() not in REFUSED, f"{path} {field}={value!r}: {e.code().name}: {e.details()}"
        if e.code() == grpc.StatusCode.INVALID_ARGUMENT and value in HOSTILE_GLOBS:
            assert field in (e.details() or ""), e.details()  # the message names the field
