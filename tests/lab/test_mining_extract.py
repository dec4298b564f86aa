"""Mining's extraction: pairs of small real files in several languages, the comment removed from the code side,
and the filters that drop trivial descriptions."""

from __future__ import annotations

import pytest
from codesearch_lab.mining import comments, extract

FIXTURES: dict[str, tuple[str, str, str, str]] = {
    # language: (path, source, the description expected, the symbol)
    "go": (
        "pkg/sum.go",
        "package pkg\n\n// Sum adds every value of the slice and returns the total.\nfunc Sum(xs []int) int {\n"
        "\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n",
        "Sum adds every value of the slice and returns the total.",
        "Sum",
    ),
    "rust": (
        "src/lib.rs",
        "/// Parses a decimal port number from the text, rejecting zero.\npub fn parse_port(s: &str) -> Option<u16> {\n"
        "    let n: u16 = s.parse().ok()?;\n    if n == 0 { None } else { Some(n) }\n}\n",
        "Parses a decimal port number from the text, rejecting zero.",
        "parse_port",
    ),
    "java": (
        "src/Cache.java",
        "class Cache {\n    /**\n     * Evicts the least recently used entry when the cache is full.\n     * @param key the key\n     */\n"
        "    @Override\n    public void evict(String key) {\n        map.remove(key);\n        size -= 1;\n    }\n}\n",
        "Evicts the least recently used entry when the cache is full.",
        "Cache.evict",
    ),
    "javascript": (
        "lib/slug.js",
        "/**\n * Turns a title into a lowercase URL slug with dashes.\n */\nfunction slugify(title) {\n"
        "  return title.toLowerCase().replace(/\\s+/g, '-');\n}\n",
        "Turns a title into a lowercase URL slug with dashes.",
        "slugify",
    ),
    "typescript": (
        "src/name.ts",
        "/** Joins the first and last name of a person with one space. */\nexport function fullName(first: string, "
        "last: string): string {\n  return first + ' ' + last;\n}\n",
        "Joins the first and last name of a person with one space.",
        "fullName",
    ),
    "ruby": (
        "lib/name.rb",
        "# Returns the full name of the person joined by a space.\ndef full_name(first, last)\n  [first, last].join(' ')\nend\n",
        "Returns the full name of the person joined by a space.",
        "full_name",
    ),
    "php": (
        "src/name.php",
        "<?php\n/** Returns the full name of the person joined by a space. */\nfunction full_name($first, $last) {\n"
        "  return $first . ' ' . $last;\n}\n",
        "Returns the full name of the person joined by a space.",
        "full_name",
    ),
    "lua": (
        "src/add.lua",
        "--- Adds two numbers together and returns their sum.\nlocal function add(a, b)\n  local s = a + b\n  return s\nend\n",
        "Adds two numbers together and returns their sum.",
        "add",
    ),
    "kotlin": (
        "src/Sum.kt",
        "/** Computes the checksum of the given byte buffer. */\nfun checksum(buf: ByteArray): Int {\n    var s = 0\n"
        "    for (b in buf) s += b\n    return s\n}\n",
        "Computes the checksum of the given byte buffer.",
        "checksum",
    ),
    "bash": (
        "bin/greet.sh",
        '#!/bin/bash\n# Prints a greeting for the user given as argument.\ngreet() {\n  local name="$1"\n  echo "hello $name"\n}\n',
        "Prints a greeting for the user given as argument.",
        "greet",
    ),
    "c": (
        "include/buf.h",
        "#include <stddef.h>\n\n/**\n * Returns the number of bytes left in the buffer.\n */\nsize_t buffer_left(const struct buffer *b, int flags);\n",
        "Returns the number of bytes left in the buffer.",
        "buffer_left",
    ),
}


@pytest.mark.parametrize("language", sorted(FIXTURES))
def test_a_doc_comment_and_its_definition_without_the_comment(language: str) -> None:
    path, source, description, symbol = FIXTURES[language]
    pairs = [p for p in extract.file_pairs(path, language, source) if p.kind == "doc_comment"]
    assert [p.description for p in pairs] == [description]
    (pair,) = pairs
    assert pair.symbol.endswith(symbol) and pair.language == language and pair.path == path
    for marker in ("/**", "///", "--- ", "# Prints", "# Returns", "* Evicts"):
        assert marker not in pair.code, (language, pair.code)
    assert symbol.rsplit(".", 1)[-1] in pair.code and description not in pair.code


def test_a_doc_comment_is_not_also_the_file_header() -> None:
    path, source, _, _ = FIXTURES["kotlin"]
    assert [p.kind for p in extract.file_pairs(path, "kotlin", source)] == ["doc_comment"]


def test_python_docstrings_are_removed_from_the_code_side() -> None:
    source = (
        '"""Helpers that read configuration files from disk."""\n\nimport os\n\n\n'
        "class Loader:\n"
        '    """Loads settings from a folder of TOML files.\n\n    Args:\n        root: the folder\n    """\n\n'
        "    def load(self, name):\n"
        '        """Reads one named settings file and returns its parsed content."""\n'
        "        path = os.path.join(self.root, name)\n        with open(path) as fh:\n            return fh.read()\n"
    )
    pairs = {p.symbol: p for p in extract.python_pairs("cfg/loader.py", source)}
    assert pairs["Loader"].description == "Loads settings from a folder of TOML files."
    assert "Loads settings" not in pairs["Loader"].code and "def load" in pairs["Loader"].code
    load = pairs["Loader.load"]
    assert load.description == "Reads one named settings file and returns its parsed content."
    assert '"""' not in load.code and load.code.startswith("def load(self, name):")
    header = pairs[""]
    assert (
        header.kind == "file_header"
        and header.description == "Helpers that read configuration files from disk."
    )
    assert "Helpers that read" not in header.code and "import os" in header.code


def test_perl_pod_documents_the_sub_it_names() -> None:
    source = (
        "package Net::Thing;\nuse strict;\n\n=head1 NAME\n\nNet::Thing - talks to remote things over a socket\n\n"
        "=head2 send_line($text)\n\nSends one line of text to the peer and waits for the reply.\n\n=cut\n\n"
        "sub send_line {\n    my ($self, $text) = @_;\n    print {$self->{sock}} $text;\n"
        "    return scalar readline($self->{sock});\n}\n1;\n"
    )
    pairs = {p.kind: p for p in extract.file_pairs("lib/Net/Thing.pm", "perl", source)}
    assert pairs["doc_comment"].description == "Sends one line of text to the peer and waits for the reply."
    assert (
        pairs["doc_comment"].code.startswith("sub send_line {") and "=head2" not in pairs["doc_comment"].code
    )
    assert pairs["file_header"].description == "talks to remote things over a socket"
    assert "=head1" not in pairs["file_header"].code


def test_a_file_header_that_is_not_a_licence() -> None:
    source = (
        "// Copyright 2020 Someone. Licensed under the MIT license.\n\n"
        "// Package wire encodes frames for the replication protocol.\npackage wire\n\n"
        "func encode(b []byte) []byte {\n\treturn append([]byte{byte(len(b))}, b...)\n}\n"
    )
    (header,) = [p for p in extract.file_pairs("wire/wire.go", "go", source) if p.kind == "file_header"]
    assert header.description == "Package wire encodes frames for the replication protocol."
    assert "Package wire encodes" not in header.code and "func encode" in header.code


def test_a_readme_section_and_the_file_it_names() -> None:
    readme = (
        "# tool\n\nIntro.\n\n## Parsing\n\nThe tokenizer in `src/lexer.py` splits input into tokens and tracks "
        "line numbers.\n\n## Licence\n\nMIT.\n"
    )
    files = {"src/lexer.py": "python", "src/other.py": "python"}
    code = (
        "def tokens(text):\n    for i, line in enumerate(text.splitlines()):\n        yield i, line.split()\n"
    )
    pairs = extract.readme_pairs(
        "README.md", readme, files, lambda rel: code if rel == "src/lexer.py" else None
    )
    assert [(p.kind, p.path) for p in pairs] == [("readme_section", "src/lexer.py")]
    assert pairs[0].description.startswith("Parsing: The tokenizer in src/lexer.py splits input")
    assert pairs[0].code == code.rstrip("\n")


@pytest.mark.parametrize(
    "text",
    [
        "TODO: write this down properly later on",
        "Short one.",
        "Copyright (c) 2019 Foo Inc. All rights reserved. Licensed under the Apache License.",
        "Code generated by protoc-gen-go. DO NOT EDIT.",
        "@param x the x value\n@return the result",
        ":param name: the name\n:returns: a thing",
        "if (x) { y(); } else { z(); } return w[0];",
        "=============================================",
    ],
)
def test_trivial_descriptions_are_dropped(text: str) -> None:
    assert comments.clean(text) == ""


def test_a_description_keeps_its_first_paragraph_bounded() -> None:
    text = "Opens the archive and lists its members in order.\nIt never extracts.\n\nSecond paragraph here."
    assert comments.clean(text) == "Opens the archive and lists its members in order. It never extracts."
    long = " ".join(["Reads the next record from the stream and checks it."] * 40)
    assert len(comments.clean(long)) <= comments.MAX_DESC_CHARS
    assert comments.clean("Returns the {@link Widget} for this {@code name} key.") == (
        "Returns the Widget for this name key."
    )
