"""Server reflection through its own client protocol (what `grpcurl list` / `grpcurl describe` send): every
service, every method symbol (`Service.Method`, which the stock servicer answered NOT_FOUND) and every message
of the API resolve to a file that defines them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import grpc
import pytest
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import ALL_SERVICES, registrars
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, rerank_pb2, search_pb2, vector_pb2
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

API_FILES = [m.DESCRIPTOR for m in (common_pb2, graph_pb2, keyword_pb2, rerank_pb2, search_pb2, vector_pb2)]


@pytest.fixture(scope="module")
def reflection(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[reflection_pb2_grpc.ServerReflectionStub]:
    home = tmp_path_factory.mktemp("home")
    server = ThreadedServer(
        registrars(Settings.from_env({"CODESEARCH_HOME": str(home)}), ALL_SERVICES)
    ).start()
    channel = grpc.insecure_channel(server.address)
    yield reflection_pb2_grpc.ServerReflectionStub(channel)
    channel.close()
    server.stop()


def ask(
    stub: reflection_pb2_grpc.ServerReflectionStub, requests: list[reflection_pb2.ServerReflectionRequest]
) -> list[reflection_pb2.ServerReflectionResponse]:
    """One reflection stream carrying every request, as grpcurl keeps one open."""
    return list(stub.ServerReflectionInfo(iter(requests)))


def files_of(answer: reflection_pb2.ServerReflectionResponse) -> list[descriptor_pb2.FileDescriptorProto]:
    assert answer.WhichOneof("message_response") == "file_descriptor_response", answer.error_response
    return [
        descriptor_pb2.FileDescriptorProto.FromString(b)
        for b in answer.file_descriptor_response.file_descriptor_proto
    ]


def message_names(message: Descriptor) -> Iterator[str]:
    yield message.full_name
    for nested in message.nested_types:
        yield from message_names(nested)


def defined_messages(files: list[descriptor_pb2.FileDescriptorProto]) -> set[str]:
    def walk(prefix: str, messages: Iterable[descriptor_pb2.DescriptorProto]) -> Iterator[str]:
        for m in messages:
            yield f"{prefix}.{m.name}"
            yield from walk(f"{prefix}.{m.name}", m.nested_type)

    return {name for f in files for name in walk(f.package, f.message_type)}


def test_every_service_is_listed_and_described(reflection: reflection_pb2_grpc.ServerReflectionStub) -> None:
    (listed,) = ask(reflection, [reflection_pb2.ServerReflectionRequest(list_services="")])
    names = {s.name for s in listed.list_services_response.service}
    api_services = {s.full_name for f in API_FILES for s in f.services_by_name.values()}
    assert names == api_services | {"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"}

    answers = ask(
        reflection, [reflection_pb2.ServerReflectionRequest(file_containing_symbol=n) for n in names]
    )
    for name, answer in zip(names, answers, strict=True):
        package, _, service = name.rpartition(".")
        assert any(f.package == package and service in {s.name for s in f.service} for f in files_of(answer))


def test_every_method_symbol_resolves_to_its_service_and_types(
    reflection: reflection_pb2_grpc.ServerReflectionStub,
) -> None:
    methods = [m for f in API_FILES for s in f.services_by_name.values() for m in s.methods]
    assert "codesearch.v1.SearchService.StreamSearch" in {m.full_name for m in methods}
    answers = ask(
        reflection,
        [reflection_pb2.ServerReflectionRequest(file_containing_symbol=m.full_name) for m in methods],
    )
    for method, answer in zip(methods, answers, strict=True):
        files = files_of(answer)
        (service,) = [s for f in files for s in f.service if s.name == method.containing_service.name]
        (described,) = [m for m in service.method if m.name == method.name]
        assert described.input_type == f".{method.input_type.full_name}"
        assert described.output_type == f".{method.output_type.full_name}"
        # The answer carries the file's dependencies, so a client can describe the request and response too.
        assert {method.input_type.full_name, method.output_type.full_name} <= defined_messages(files)


def test_every_message_is_described(reflection: reflection_pb2_grpc.ServerReflectionStub) -> None:
    names = sorted({n for f in API_FILES for m in f.message_types_by_name.values() for n in message_names(m)})
    assert {"codesearch.v1.StreamSearchRequest", "codesearch.v1.SearchBudget", "codesearch.v1.Hit"} <= set(
        names
    )
    answers = ask(
        reflection, [reflection_pb2.ServerReflectionRequest(file_containing_symbol=n) for n in names]
    )
    for name, answer in zip(names, answers, strict=True):
        assert name in defined_messages(files_of(answer)), name


def test_unknown_symbols_are_not_found(reflection: reflection_pb2_grpc.ServerReflectionStub) -> None:
    unknown = [
        "codesearch.v1.SearchService.NoSuchMethod",
        "codesearch.v1.NoSuchService.Search",
        "codesearch.v1.NoSuchMessage",
        "NoPackage",
    ]
    answers = ask(
        reflection, [reflection_pb2.ServerReflectionRequest(file_containing_symbol=n) for n in unknown]
    )
    for answer in answers:
        assert answer.WhichOneof("message_response") == "error_response"
        assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_server_streaming_is_described(reflection: reflection_pb2_grpc.ServerReflectionStub) -> None:
    (answer,) = ask(
        reflection,
        [
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="codesearch.v1.SearchService.StreamSearch"
            )
        ],
    )
    (service,) = [s for f in files_of(answer) for s in f.service if s.name == "SearchService"]
    (stream,) = [m for m in service.method if m.name == "StreamSearch"]
    assert stream.server_streaming and not stream.client_streaming
