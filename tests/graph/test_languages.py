"""The query-table languages: definitions (kind, scope), calls and imports, and their imports resolved to files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from codesearch.common.parsing import Extraction, extract, supported_languages
from codesearch.graph.query import GraphReader
from codesearch.graph.store import DB_NAME, build_generation, connect_readonly, parse_files


def _x(path: str, lang: str, src: str) -> Extraction:
    result = extract(path, lang, src.encode())
    assert result is not None and result.error_count == 0, result
    return result


def _defs(e: Extraction) -> set[tuple[str, str, int]]:
    return {(d.qualified_name, d.kind, d.start_line) for d in e.definitions}


def _calls(e: Extraction) -> set[tuple[str, str, str]]:
    return {(c.callee, c.receiver, c.enclosing) for c in e.calls}


def test_every_language_family_of_the_issue_has_a_grammar() -> None:
    wanted = {"kotlin", "scala", "swift", "elixir", "lua", "haskell", "zig", "bash", "sql", "protobuf", "hcl"}
    wanted |= {
        "yaml",
        "dockerfile",
        "make",
        "objc",
        "dart",
        "ocaml",
        "erlang",
        "clojure",
        "r",
        "julia",
        "perl",
    }
    wanted |= {"graphql", "vue", "svelte", "markdown"}
    assert wanted <= set(supported_languages())
    assert len(supported_languages()) >= 25


def test_jvm_languages() -> None:
    kt = _x(
        "a.kt",
        "kotlin",
        "import io.ktor.http.HttpMethod\n"
        "class Client(val e: Engine) {\n  fun close() { e.stop(); helper(1) }\n}\n"
        "interface Engine { fun stop() }\nfun Client.get(url: String) = request(url)\n",
    )
    assert _defs(kt) == {
        ("Client", "class", 2),
        ("Client.close", "method", 3),
        ("Engine", "interface", 5),
        ("Engine.stop", "method", 5),
        ("Client.get", "method", 6),
    }
    assert {
        ("stop", "e", "Client.close"),
        ("helper", "", "Client.close"),
        ("request", "", "Client.get"),
    } <= _calls(kt)
    assert [i.module for i in kt.imports] == ["io.ktor.http.HttpMethod"]

    sc = _x(
        "a.scala",
        "scala",
        "import cats.data.{Ior, NonEmptyList => Nel}\ntrait Functor[F[_]] { def map[A](fa: F[A]): F[A] }\n"
        "object Functor { val x = 1; def apply(): Int = helper(new Box(2)) }\n",
    )
    assert _defs(sc) == {
        ("Functor", "trait", 2),
        ("Functor.map", "method", 2),
        ("Functor", "module", 3),
        ("Functor.x", "constant", 3),
        ("Functor.apply", "method", 3),
    }
    assert {("helper", "", "Functor.apply"), ("Box", "", "Functor.apply")} <= _calls(sc)
    (imp,) = sc.imports
    assert (imp.module, imp.names, imp.aliases) == ("cats.data", ["Ior", "NonEmptyList"], ["", "Nel"])


def test_swift_extension_methods_belong_to_their_type() -> None:
    e = _x(
        "a.swift",
        "swift",
        "import Foundation\nstruct Params { func encode() {} }\nprotocol Encoder { func encode() }\n"
        "extension Session { func download() { request(.now()) } }\n",
    )
    assert _defs(e) == {
        ("Params", "struct", 2),
        ("Params.encode", "method", 2),
        ("Encoder", "interface", 3),
        ("Encoder.encode", "method", 3),
        ("Session.download", "method", 4),
    }
    assert {c.callee for c in e.calls} == {"request", "now"}


def test_elixir_clauses_are_one_function_and_forms_are_not_calls() -> None:
    e = _x(
        "lib/plug/conn.ex",
        "elixir",
        "defmodule Plug.Conn do\n  alias Plug.Conn.Adapter\n  @behaviour Plug\n"
        "  def run(conn, []), do: go(conn)\n  def run(conn, opts), do: Adapter.send(conn, opts)\n"
        "  defp go(conn) when is_map(conn), do: conn\nend\n",
    )
    assert _defs(e) == {
        ("Plug.Conn", "module", 1),
        ("Plug.Conn.run", "function", 4),
        ("Plug.Conn.go", "function", 6),
    }
    run = next(d for d in e.definitions if d.name == "run")
    assert run.end_line == 5  # both clauses
    assert _calls(e) == {
        ("go", "", "Plug.Conn.run"),
        ("send", "Adapter", "Plug.Conn.run"),
        ("is_map", "", "Plug.Conn.go"),
    }
    assert [i.module for i in e.imports] == ["Plug.Conn.Adapter"]


def test_lua_haskell_zig_bash() -> None:
    lua = _x(
        "lua/lazy/a.lua",
        "lua",
        'local Config = require("lazy.core.config")\nlocal M = {}\nfunction M.setup(o) Config.setup(o) end\n'
        "function M:run() self:go() end\nlocal function helper() end\n",
    )
    assert _defs(lua) == {("M.setup", "method", 3), ("M.run", "method", 4), ("helper", "function", 5)}
    assert [(i.module, i.alias) for i in lua.imports] == [("lazy.core.config", "Config")]

    hs = _x(
        "src/A.hs",
        "haskell",
        "module A where\nimport qualified Data.Map as M\ndata V = V Int\nclass C a where\n  c :: a -> Int\n"
        "f :: Int -> Int\nf 0 = 1\nf n = M.size m + g n\n  where g x = show x\n",
    )
    assert _defs(hs) == {
        ("V", "struct", 3),
        ("C", "interface", 4),
        ("C.c", "method", 5),
        ("f", "function", 7),
        ("f.g", "function", 9),
    }
    assert {("size", "M", "f"), ("g", "", "f"), ("show", "", "f.g")} <= _calls(hs)
    assert [(i.module, i.alias) for i in hs.imports] == [("Data.Map", "M")]

    zig = _x(
        "a.zig",
        "zig",
        'const p = @import("clap/parsers.zig");\npub const Names = struct {\n'
        "    pub fn longest(n: *const Names) usize { return helper(n); }\n};\nfn helper(n: i32) i32 { return p.int(n); }\n",
    )
    assert _defs(zig) == {("Names", "struct", 2), ("Names.longest", "method", 3), ("helper", "function", 5)}
    assert {("helper", "", "Names.longest"), ("int", "p", "helper")} <= _calls(zig)
    assert [(i.module, i.alias) for i in zig.imports] == [("clap/parsers.zig", "p")]

    sh = _x(
        "lib/a.bash", "bash", 'source "$ROOT/lib/common.bash"\nwarn() {\n  printf "%s" "$1"\n  helper\n}\n'
    )
    assert _defs(sh) == {("warn", "function", 2)}
    assert _calls(sh) == {("printf", "", "warn"), ("helper", "", "warn")}
    assert [i.module for i in sh.imports] == ["$ROOT/lib/common.bash"]


def test_schema_and_config_definitions() -> None:
    proto = _x(
        "a.proto",
        "protobuf",
        'import "b.proto";\nmessage Foo { message Inner {} }\nservice S { rpc Get(Foo) returns (Foo); }\n',
    )
    assert _defs(proto) == {
        ("Foo", "struct", 2),
        ("Foo.Inner", "struct", 2),
        ("S", "interface", 3),
        ("S.Get", "method", 3),
    }
    sql = _x("a.sql", "sql", "CREATE TABLE users (id INT);\nCREATE VIEW v AS SELECT * FROM users;\n")
    assert _defs(sql) == {("users", "struct", 1), ("v", "struct", 2)}
    tf = _x("main.tf", "hcl", 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\nvariable "region" {}\n')
    assert _defs(tf) == {("aws_s3_bucket.b", "module", 1), ("region", "module", 4)}
    md = _x("README.md", "markdown", "# Title\nintro\n## Configure X\nset X=1\n")
    assert _defs(md) == {("Title", "section", 1), ("Title.Configure X", "section", 3)}
    assert not md.symbols  # headings cut chunks; the graph keeps no symbols for them


def _graph(tmp_path: Path, files: dict[str, str]) -> GraphReader:
    parsed = parse_files(
        (p, "", hashlib.sha256(s.encode()).hexdigest(), s.encode()) for p, s in files.items()
    )
    build_generation(None, tmp_path / DB_NAME, parsed, [], True, 1)
    return GraphReader("t", connect_readonly(tmp_path / DB_NAME))


@pytest.mark.parametrize(
    ("files", "importer", "target"),
    [
        (
            {
                "plug/conn.ex": "defmodule Plug.Conn do\nend\n",
                "plug/a.ex": "defmodule A do\n  alias Plug.Conn\nend\n",
            },
            "plug/a.ex",
            "plug/conn.ex",
        ),
        (
            {"lazy/core/config.lua": "return {}\n", "lazy/a.lua": 'local C = require("lazy.core.config")\n'},
            "lazy/a.lua",
            "lazy/core/config.lua",
        ),
        (
            {
                "Data/Aeson/Types.hs": "module Data.Aeson.Types where\n",
                "Data/A.hs": "module A where\nimport Data.Aeson.Types\n",
            },
            "Data/A.hs",
            "Data/Aeson/Types.hs",
        ),
        (
            {
                "io/ktor/http/HttpMethod.kt": "class HttpMethod\n",
                "io/ktor/a.kt": "import io.ktor.http.HttpMethod\n",
            },
            "io/ktor/a.kt",
            "io/ktor/http/HttpMethod.kt",
        ),
        (
            {"clap/parsers.zig": "fn f() void {}\n", "clap.zig": 'const p = @import("clap/parsers.zig");\n'},
            "clap.zig",
            "clap/parsers.zig",
        ),
        (
            {"lib/common.bash": "f() { :; }\n", "lib/main.bash": 'source "$ROOT/lib/common.bash"\n'},
            "lib/main.bash",
            "lib/common.bash",
        ),
    ],
)
def test_imports_resolve_to_files(tmp_path: Path, files: dict[str, str], importer: str, target: str) -> None:
    reader = _graph(tmp_path, files)
    rows = reader._q(
        "SELECT t.path FROM imports i JOIN files f ON f.id = i.file_id JOIN files t ON t.id = i.target_file_id"
        " WHERE f.path = ?",
        (importer,),
    )
    assert [r[0] for r in rows] == [target]


def test_calls_link_across_files_in_a_new_language(tmp_path: Path) -> None:
    reader = _graph(
        tmp_path,
        {
            "lua/lazy/util.lua": "local M = {}\nfunction M.track(e) return e end\nreturn M\n",
            "lua/lazy/stats.lua": 'local Util = require("lazy.util")\nlocal function on()\n  Util.track(1)\nend\n',
        },
    )
    files, ndefs, edges, errors, _version = reader.stats()
    assert (files, errors) == (2, 0) and ndefs == 2 and edges >= 2  # one import edge, one call edge
    refs = reader._q(
        "SELECT c.caller FROM call_targets t JOIN calls c ON c.id = t.call_id JOIN defs d ON d.id = t.def_id"
        " WHERE d.qname = 'M.track'"
    )
    assert [r[0] for r in refs] == ["on"]
