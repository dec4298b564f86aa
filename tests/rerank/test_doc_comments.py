"""Doc comments above definitions, outside Python: what the trainer mines from Go, C#, Rust, Elixir, Lua and
Bash through the real tree-sitter parser."""

from __future__ import annotations

from pathlib import Path

from codesearch.rerank import doc_comments as rdoc
from codesearch.rerank import pairs as rpairs

GO = """package chi

// Copyright notice, apart from the code.

// Use appends a middleware handler to the Mux middleware stack.
// It must be called before any route.
func (mx *Mux) Use(middlewares ...func(http.Handler) http.Handler) {
	if mx.handler != nil {
		panic("chi: all middlewares must be defined before routes on a mux")
	}
	mx.middlewares = append(mx.middlewares, middlewares...)
}

func undocumented() {
	a := 1
	_ = a
}
"""

CSHARP = """namespace Newtonsoft.Json.Bson
{
    public class BsonObjectId
    {
        /// <summary>
        /// Initializes a new instance of the <see cref="BsonObjectId"/> class with the given bytes.
        /// </summary>
        /// <param name="value">The Oid value.</param>
        [Obsolete("use the other one")]
        public BsonObjectId(byte[] value)
        {
            Value = value;
        }
    }
}
"""

RUST = """/// Deserialize a missing field of an optional type as `None` instead of an error.
#[inline]
pub fn missing_field<V>(field: &'static str) -> Result<V, E> {
    let x = 1;
    Err(E::missing_field(field))
}
"""

ELIXIR = '''defmodule Plug.BasicAuth do
  @doc """
  Parses the request username and password from Basic HTTP auth.

  It returns a tuple.
  """
  def parse_basic_auth(conn) do
    with ["Basic " <> encoded] <- get_req_header(conn, "authorization") do
      :error
    end
  end
end
'''

LUA = """--- Gets the runtime path without the after directories
function M.get_rtp()
  local rtp = {}
  return rtp
end
"""

BASH = """#!/usr/bin/env bash
# ensure a minimum version of bats is running or exit with failure
bats_require_minimum_version() {
  local required_minimum_version=$1
  return 0
}
"""


def _mined(tmp_path: Path, name: str, source: str) -> list[rpairs.Definition]:
    (tmp_path / name).write_text(source)
    return rpairs.mine(tmp_path)


def test_go_comment_block_touching_the_definition(tmp_path: Path) -> None:
    defs = _mined(tmp_path, "mux.go", GO)
    assert [(d.name, d.sentence) for d in defs] == [
        ("Use", "appends a middleware handler to the Mux middleware stack")  # the leading name is dropped
    ]
    d = defs[0]
    assert d.path == "mux.go" and d.breadcrumb == ["Mux"]
    assert "// Use appends" not in d.code and d.code.startswith("func (mx *Mux) Use(")
    assert (
        d.full_code.startswith("// Use appends a middleware handler")
        and "mx.middlewares = append" in d.full_code
    )


def test_csharp_xml_doc_through_an_attribute(tmp_path: Path) -> None:
    defs = _mined(tmp_path, "BsonObjectId.cs", CSHARP)
    ctor = [d for d in defs if d.name == "BsonObjectId" and "byte[] value" in d.code]
    assert [d.sentence for d in ctor] == [
        "Initializes a new instance of the BsonObjectId class with the given bytes"
    ]


def test_rust_doc_comment_above_an_attribute(tmp_path: Path) -> None:
    defs = _mined(tmp_path, "de.rs", RUST)
    assert [(d.name, d.sentence) for d in defs] == [
        ("missing_field", "Deserialize a missing field of an optional type as `None` instead of an error")
    ]


def test_elixir_doc_heredoc(tmp_path: Path) -> None:
    defs = _mined(tmp_path, "basic_auth.ex", ELIXIR)
    assert ("parse_basic_auth", "Parses the request username and password from Basic HTTP auth") in [
        (d.name, d.sentence) for d in defs
    ]


def test_lua_and_bash_comments(tmp_path: Path) -> None:
    (tmp_path / "cache.lua").write_text(LUA)
    (tmp_path / "common.bash").write_text(BASH)
    found = {(d.path, d.sentence) for d in rpairs.mine(tmp_path)}
    assert ("cache.lua", "Gets the runtime path without the after directories") in found
    assert ("common.bash", "ensure a minimum version of bats is running or exit with failure") in found


def test_hash_is_not_a_comment_in_c() -> None:
    lines = ["#define HELLO 1", "#include <stdio.h>", "int main(void) {"]
    assert rdoc.leading_comment(lines, 2, "c") is None
    assert rdoc.leading_comment(["/* Adds two numbers together. */", "int add(int a, int b) {"], 1, "c") == (
        0,
        "Adds two numbers together.",
    )


def test_markup_is_reduced_to_words() -> None:
    assert rdoc.plain_text("Helper for {@link Annotation} instances.") == "Helper for Annotation instances."
    assert rdoc.plain_text('<summary>Gets a <see cref="JToken"/>.</summary>') == "Gets a JToken."
    assert rdoc.plain_text("of type `Option<T>`") == "of type `Option<T>`"  # code, not markup
