"""Chunks cut at the syntax of each language family, from the indexer's one parse; a broken file is still chunked."""

from __future__ import annotations

from codesearch.common.languages import ProjectHint
from codesearch.common.parsing.wire import from_message
from codesearch.graph.store import inputs_from_update
from codesearch.orchestrator.indexed_file import graph_file, index_file
from codesearch.v1 import common_pb2


def _chunks(path: str, text: str) -> list[tuple[int, int, str]]:
    indexed, _parsed = index_file("r", path, text.encode())
    assert {c.start_line for c in indexed.chunks} and all(c.text.strip() for c in indexed.chunks)
    return [(c.start_line, c.end_line, c.symbol) for c in indexed.chunks]


def test_markdown_is_cut_by_heading() -> None:
    body = "\n".join(f"line {i}" for i in range(45))
    doc = f"# Guide\nintro\n## Install\n{body}\n## Configure X\nset X=1 in the config\n"
    chunks = _chunks("docs/guide.md", doc)
    assert (49, 50, "Guide.Configure X") in chunks  # "how do I configure X" finds its own section
    assert any(sym == "Guide.Install" for _s, _e, sym in chunks)


def test_config_and_schema_files_are_cut_at_their_blocks() -> None:
    services = "".join(f"  svc{i}:\n    image: x{i}\n    ports: [{i}]\n" for i in range(30))
    yaml = _chunks("compose.yaml", f"version: 3\nservices:\n{services}")
    assert any(sym.startswith("services.svc") for _s, _e, sym in yaml)
    sql = _chunks(
        "schema.sql", "CREATE TABLE users (\n  id INT\n);\n\nCREATE VIEW active AS SELECT * FROM users;\n"
    )
    assert [sym for _s, _e, sym in sql] == ["users", "active"]
    docker = _chunks(
        "Dockerfile", "FROM python:3.11 AS build\nRUN pip install x\n\nFROM debian\nCOPY --from=build /a /a\n"
    )
    assert [(s, e) for s, e, _sym in docker] == [(1, 3), (4, 5)]
    tf = _chunks("main.tf", 'resource "aws_s3_bucket" "logs" {\n  bucket = "x"\n}\n\nvariable "region" {}\n')
    assert [sym for _s, _e, sym in tf] == ["aws_s3_bucket.logs", "region"]
    vue = _chunks("App.vue", "<template>\n<div/>\n</template>\n<script>\nexport default {}\n</script>\n")
    assert [sym for _s, _e, sym in vue] == ["template", "script"]


def test_a_file_that_fails_to_parse_is_chunked_and_its_errors_counted() -> None:
    src = "class Ok {\n  fun a() = 1\n}\nfun broken( {\n  val x = \n}\nfun b() = 2\n"
    indexed, parsed = index_file("r", "src/Broken.kt", src.encode())
    assert parsed is not None and parsed.error_count > 0
    covered = {n for c in indexed.chunks for n in range(c.start_line, c.end_line + 1)}
    assert covered >= {1, 2, 3, 4, 7}  # nothing dropped
    (stored,) = inputs_from_update([graph_file(indexed, parsed)])
    assert stored.extraction is not None and stored.extraction.error_count == parsed.error_count


def test_the_graph_leg_stores_the_indexers_parse_without_parsing_again() -> None:
    indexed, parsed = index_file("r", "pkg/util.py", b"def helper():\n    return 1\n")
    assert parsed is not None
    # Mark the sent parse: a second parse in the graph leg could not produce this definition.
    parsed.definitions.append(
        common_pb2.ParsedDefinition(name="marker", qualified_name="marker", kind="function")
    )
    (stored,) = inputs_from_update([graph_file(indexed, parsed)])
    assert stored.extraction == from_message("pkg/util.py", "python", parsed)
    assert [d.name for d in stored.extraction.definitions] == ["helper", "marker"]
    # The keyword and vector legs get chunks, the graph leg the bytes and the parse, no chunks.
    assert indexed.chunks and not indexed.HasField("parsed")
    assert not graph_file(indexed, parsed).chunks


def test_headers_follow_their_project() -> None:
    plain = b"#ifndef X_H\n#define X_H\nint f(int a);\n#endif\n"
    cpp_tree = ProjectHint.from_paths(["a.cc", "b.cc", "x.h"])
    assert index_file("r", "x.h", plain, cpp_tree)[0].language == "cpp"
    assert index_file("r", "x.h", plain, ProjectHint.from_paths(["a.c", "x.h"]))[0].language == "c"
    objc = b"#import <Foundation/Foundation.h>\n@interface Foo : NSObject\n@end\n"
    assert index_file("r", "Foo.h", objc, ProjectHint.from_paths(["a.c"]))[0].language == "objc"
    assert index_file("r", "t.h", b"namespace a {\nclass B {};\n}\n")[0].language == "cpp"
