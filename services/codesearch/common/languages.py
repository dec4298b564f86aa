"""Language detection by file name and extension. Names are lower-case and shared by every service."""

from __future__ import annotations

from pathlib import PurePosixPath

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


def detect_language(path: str, head: bytes = b"") -> str:
    """Language of a file from its name, extension, or shebang line; "" when unknown."""
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
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
