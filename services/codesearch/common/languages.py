"""Language detection by file name, extension, shebang and, for `.h` headers, content and project.

Names are lower-case and shared by every service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codesearch.common.parsing.macros import MacroTable

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".sc": "scala",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".m": "objc",
    ".mm": "objc",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".R": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".edn": "clojure",
    ".dart": "dart",
    ".zig": "zig",
    ".nim": "nim",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".ps1": "powershell",
    ".sql": "sql",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".less": "less",
    ".vue": "vue",
    ".svelte": "svelte",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".tex": "latex",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".gradle": "groovy",
    ".groovy": "groovy",
    ".cmake": "cmake",
    ".mk": "make",
    ".txt": "text",
}

FILENAMES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "Makefile": "make",
    "GNUmakefile": "make",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "BUILD": "starlark",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    "Jenkinsfile": "groovy",
    ".bashrc": "bash",
}

SHEBANGS: dict[str, str] = {
    "python": "python",
    "bash": "bash",
    "sh": "bash",
    "node": "javascript",
    "ruby": "ruby",
    "perl": "perl",
}


CPP_SUFFIXES = frozenset({".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ipp"})
OBJC_SUFFIXES = frozenset({".m", ".mm"})
# Where a C-family project defines the macros its files share (read for the project's macro table).
HEADER_SUFFIXES = frozenset({".h", ".hpp", ".hh", ".hxx", ".inc", ".inl"})
HEADER_SCAN_BYTES = 16384  # a header's markers are in its first declarations; abseil's all show in 16 KiB
OBJC_MARKERS = re.compile(rb"^[ \t]*(?:@interface|@implementation|@protocol|@end\b|#import\b)", re.MULTILINE)
CPP_MARKERS = re.compile(
    rb"^[ \t]*(?:namespace\s+[\w:]*\s*\{|template\s*<|(?:class|struct)\s+\w+\s*(?:final\s*)?:\s*(?:public|private)"
    rb"|class\s+\w+\s*\{|using\s+namespace\b|(?:public|private|protected)\s*:)"
    rb"|\bstd::|\bconstexpr\b|\bnullptr\b",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ProjectHint:
    """What the files around a header say about it: a C++ tree reads its plain headers as C++."""

    cpp: bool = False  # more C++ sources than C sources
    objc: bool = False  # more Objective-C sources than C and C++ together
    macros: MacroTable | None = None  # the attribute-like macros its headers define (see with_macros)

    @classmethod
    def from_paths(cls, paths: Iterable[str]) -> ProjectHint:
        n_c = n_cpp = n_objc = 0
        for path in paths:
            suffix = PurePosixPath(path).suffix
            n_c += suffix == ".c"
            n_cpp += suffix in CPP_SUFFIXES
            n_objc += suffix in OBJC_SUFFIXES
        return cls(cpp=n_cpp > n_c, objc=n_objc > n_c + n_cpp)

    def with_macros(self, headers: Iterable[bytes]) -> ProjectHint:
        """The same hint with the macro table its headers' `#define`s make (common/parsing/macros.py)."""
        from codesearch.common.parsing.macros import collect  # the parsing package loads tree-sitter

        return replace(self, macros=collect(headers))


def is_header(path: str) -> bool:
    return PurePosixPath(path).suffix in HEADER_SUFFIXES


def header_language(content: bytes, project: ProjectHint | None = None) -> str:
    """C, C++ or Objective-C for a `.h`: its own markers first, then the project's majority, else C."""
    head = content[:HEADER_SCAN_BYTES]
    if OBJC_MARKERS.search(head):
        return "objc"
    if CPP_MARKERS.search(head):
        return "cpp"
    if project is not None and project.objc:
        return "objc"
    if project is not None and project.cpp:
        return "cpp"
    return "c"


def detect_language(path: str, head: bytes = b"", project: ProjectHint | None = None) -> str:
    """Language of a file from its name, extension, or shebang line; "" when unknown.

    `head` is the start of the file (a header's first HEADER_SCAN_BYTES decide between C, C++ and Objective-C).
    """
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
    if p.suffix == ".h":
        return header_language(head, project)
    lang = EXTENSIONS.get(p.suffix) or EXTENSIONS.get(p.suffix.lower())
    if lang:
        return lang
    if head.startswith(b"#!"):
        first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        for word, name in SHEBANGS.items():
            if word in first:
                return name
    return ""


def known_languages() -> list[str]:
    return sorted(set(EXTENSIONS.values()) | set(FILENAMES.values()))
