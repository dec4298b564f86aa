"""StreamSearch through the real server: streamed file matches with column ranges, budgets and their stop
reasons, statistics, filters, score explanations, and listing through server reflection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.fixture_types import Git, StartServer

SERVICES = ("keyword", "graph", "orchestrator")  # no model needed
MANY_FILES = 300
LINES_PER_FILE = 20


@pytest.fixture
def server(tmp_path: Path, start_server: StartServer) -> ThreadedServer:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    return start_server(registrars(settings, SERVICES))


@pytest.fixture
def stub(server: ThreadedServer) -> search_pb2_grpc.SearchServiceStub:
    return search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))


def index(
    stub: search_pb2_grpc.SearchServiceStub, path: Path, **kw: Any
) -> search_pb2.IndexRepositoryResponse:
    return list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(path), **kw)))[-1]


@pytest.fixture
def many(stub: search_pb2_grpc.SearchServiceStub, tmp_path: Path) -> Path:
    """300 Python files of 20 lines, each line holding `needle` twice; a Go file and a docs file."""
    root = tmp_path / "many"
    (root / "pkg").mkdir(parents=True)
    for i in range(MANY_FILES):
        body = "".join(f"x_{j} = 'needle' + needle_{j}  # row\n" for j in range(LINES_PER_FILE))
        (root / "pkg" / f"m{i:03d}.py").write_text(body)
    (root / "main.go").write_text("package main\n\nfunc needleFinder() {}\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n\nThe NEEDLE is found ééé needle.\n")
    index(stub, root, name="many")
    return root


def run(
    stub: search_pb2_grpc.SearchServiceStub, query: str, **kw: Any
) -> tuple[list[common_pb2.FileMatch], search_pb2.StreamSearchDone, int]:
    files: list[common_pb2.FileMatch] = []
    done = None
    messages = 0
    for message in stub.StreamSearch(search_pb2.StreamSearchRequest(query=query, **kw)):
        messages += 1
        assert done is None, "nothing may follow the totals"
        if message.WhichOneof("event") == "files":
            files.extend(message.files.files)
        else:
            done = message.done
    assert done is not None, "the stream must end with its totals"
    return files, done, messages


def test_streams_every_match_with_ranges_and_totals(
    stub: search_pb2_grpc.SearchServiceStub, many: Path
) -> None:
    files, done, messages = run(stub, "needle", budget=search_pb2.SearchBudget(max_matches=1_000_000))
    assert done.stop_reason == common_pb2.STOP_REASON_COMPLETED
    assert messages > 3  # streamed in batches, not one answer
    assert len(files) == MANY_FILES + 2
    assert done.files_matched == len(files)
    assert done.lines_matched == MANY_FILES * LINES_PER_FILE + 2
    (leg,) = done.legs
    assert leg.leg == common_pb2.LEG_TRIGRAM
    assert (leg.files_considered, leg.files_loaded, leg.shards_visited, leg.shards_total) == (302, 302, 1, 1)
    assert leg.bytes_considered == sum(p.stat().st_size for p in many.rglob("*") if p.is_file())
    assert leg.matches == MANY_FILES * LINES_PER_FILE * 2 + 1 + 2  # two per row, one in Go, two in the guide

    row = next(f for f in files if f.path == "pkg/m000.py").lines[0]
    assert (row.line_number, row.line) == (1, "x_0 = 'needle' + needle_0  # row")
    assert [(r.start_column, r.end_column) for r in row.ranges] == [(8, 14), (18, 24)]
    guide = next(f for f in files if f.path == "docs/guide.md")
    assert guide.language == "markdown"
    # Columns count characters: "ééé" before the second match does not shift it by bytes.
    assert [(r.start_column, r.end_column) for r in guide.lines[0].ranges] == [(5, 11), (25, 31)]


def test_match_budget_stops_the_stream_and_says_so(
    stub: search_pb2_grpc.SearchServiceStub, many: Path
) -> None:
    files, done, _ = run(stub, "needle", budget=search_pb2.SearchBudget(max_matches=50))
    assert done.stop_reason == common_pb2.STOP_REASON_MAX_MATCHES
    assert done.lines_matched == sum(len(f.lines) for f in files) == 50
    assert done.legs[0].files_loaded < MANY_FILES  # it stopped early instead of verifying everything
    # Bytes count the files of the batches searched, not every file in scope.
    in_scope = sum(p.stat().st_size for p in many.rglob("*") if p.is_file())
    assert 0 < done.legs[0].bytes_considered < in_scope

    _, timed, _ = run(stub, "needle", budget=search_pb2.SearchBudget(max_matches=1_000_000, max_wall_ms=1))
    assert timed.stop_reason == common_pb2.STOP_REASON_MAX_WALL_TIME
    assert timed.lines_matched < MANY_FILES * LINES_PER_FILE


def test_regex_filters_and_explanations(
    stub: search_pb2_grpc.SearchServiceStub, many: Path, tmp_path: Path, git: Git
) -> None:
    files, done, _ = run(stub, r"needle_1\d\b", mode=search_pb2.SEARCH_MODE_REGEX, path_glob="pkg/m00*.py")
    assert {f.path for f in files} == {f"pkg/m00{i}.py" for i in range(10)}
    assert all([line.line_number for line in f.lines] == list(range(11, 21)) for f in files)
    assert [(r.start_column, r.end_column) for r in files[0].lines[0].ranges] == [
        (19, 28)
    ]  # "x_10 = 'needle' + needle_10"
    assert done.legs[0].files_considered == 10

    go, _, _ = run(stub, "needle", languages=["go"], explain=True, case_sensitive=True)
    (line,) = go[0].lines
    assert go[0].path == "main.go" and line.explanation.match_count == 1
    assert line.explanation.definition_line and not line.explanation.whole_word
    assert line.explanation.score == pytest.approx(line.score)
    assert "definition" in line.explanation.text and "3-line file" in line.explanation.text

    # Repository and ref filters: a git ref beside the directory, each hit with its repository's commit.
    repo = tmp_path / "g"
    repo.mkdir()
    (repo / "a.py").write_text("needle = 1\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "one"]):
        git(repo, *args)
    head = git(repo, "rev-parse", "HEAD")
    index(stub, repo, ref="main")
    at_ref, done, _ = run(stub, "needle", refs=["main"])
    assert [(f.repository, f.path, f.commit, f.ref) for f in at_ref] == [("g@main", "a.py", head, "main")]
    assert done.legs[0].shards_total == 1
    assert {f.repository for f in run(stub, "needle", repositories=["g"])[0]} == {"g@main"}
    assert {f.repository for f in run(stub, "needle")[0]} == {"g@main", "many"}


def test_bad_requests_are_refused_plainly(stub: search_pb2_grpc.SearchServiceStub, many: Path) -> None:
    cases = [
        (search_pb2.StreamSearchRequest(query=""), "empty"),
        (
            search_pb2.StreamSearchRequest(query="x", mode=search_pb2.SEARCH_MODE_SEMANTIC),
            "SEARCH_MODE_LITERAL",
        ),
        (search_pb2.StreamSearchRequest(query="(", mode=search_pb2.SEARCH_MODE_REGEX), "invalid regex"),
        (
            search_pb2.StreamSearchRequest(query="x", budget=search_pb2.SearchBudget(max_matches=-1)),
            "max_matches",
        ),
    ]
    for request, words in cases:
        with pytest.raises(grpc.RpcError) as e:
            list(stub.StreamSearch(request))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, request
        details = e.value.details()
        assert details is not None
        assert words in details
    with pytest.raises(grpc.RpcError) as e:
        list(stub.StreamSearch(search_pb2.StreamSearchRequest(query="x", refs=["nowhere"])))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_and_describes_the_new_rpcs(server: ThreadedServer) -> None:
    """What `grpcurl list` and `grpcurl describe` do, through the reflection service."""
    reflection = reflection_pb2_grpc.ServerReflectionStub(grpc.insecure_channel(server.address))
    (listed,) = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for s in listed.list_services_response.service}
    assert {"codesearch.v1.SearchService", "codesearch.v1.KeywordService"} <= names

    request = reflection_pb2.ServerReflectionRequest(file_containing_symbol="codesearch.v1.SearchService")
    (answer,) = reflection.ServerReflectionInfo(iter([request]))
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(b)
        for b in answer.file_descriptor_response.file_descriptor_proto
    ]
    service = next(s for f in files for s in f.service if s.name == "SearchService")
    methods = {m.name: m for m in service.method}
    assert methods["StreamSearch"].server_streaming and not methods["StreamSearch"].client_streaming
    assert methods["StreamSearch"].input_type == ".codesearch.v1.StreamSearchRequest"
    messages = {m.name for f in files for m in f.message_type}
    assert {"StreamSearchRequest", "StreamSearchResponse", "StreamSearchDone", "SearchBudget"} <= messages


def test_unary_literal_hits_carry_their_match_ranges(
    stub: search_pb2_grpc.SearchServiceStub, many: Path
) -> None:
    resp = stub.Search(
        search_pb2.SearchRequest(
            query="needle", mode=search_pb2.SEARCH_MODE_LITERAL, repositories=["many"], path_glob="docs/*"
        )
    )
    (hit,) = resp.hits
    assert [(r.line_number, r.start_column, r.end_column) for r in hit.match_ranges] == [
        (3, 5, 11),
        (3, 25, 31),
    ]
