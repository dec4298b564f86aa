"""Import resolution for the languages whose imports name modules or packages by convention, not by path.

Each resolver turns an import into the repository paths the convention puts it at, then looks them up by path
suffix: the indexed root often sits inside the source tree (`src/main/java/org/x`, `lib/plug`), so the leading
components of the expected path are dropped one at a time until exactly one file (or folder) matches.
"""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

SHELL_VARIABLE = re.compile(r"^(?:\$\{?[\w?:-]+\}?/)+")  # "$BATS_ROOT/${LIB}/x.bash" -> "x.bash"
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class Paths(Protocol):
    """What the resolvers need from graph.resolve.FileIndex."""

    by_path: dict[str, int]
    by_dir: dict[str, list[int]]
    language: dict[int, str]

    def _suffix(self, suffix: str) -> list[str]: ...


def file_by_suffix(index: Paths, rel: str) -> int | None:
    """The one file whose path ends with `rel` or, failing that, with a shorter tail of it."""
    parts = rel.split("/")
    for k in range(len(parts)):
        tail = "/".join(parts[k:])
        hits = index._suffix(tail)
        if len(hits) == 1:
            return index.by_path[hits[0]]
        if tail in hits:  # "conn.ex" at the root beside "adapters/test/conn.ex": the root one
            return index.by_path[tail]
        if hits:  # ambiguous: a shorter tail only matches more
            return None
    return None


def folder_files(index: Paths, rel_dir: str, language: str) -> list[int]:
    """Files of `language` in the one folder whose path ends with `rel_dir` (or a shorter tail of it)."""
    parts = [p for p in rel_dir.split("/") if p]
    for k in range(len(parts)):
        tail = "/".join(parts[k:])
        dirs = [d for d in index.by_dir if d == tail or d.endswith("/" + tail)]
        if len(dirs) == 1:
            return [f for f in index.by_dir[dirs[0]] if index.language.get(f) == language]
        if dirs:
            return []
    return []


def dotted(index: Paths, language: str, module: str, name: str, extension: str) -> list[int]:
    """Kotlin, Scala: `a.b.C` is the file a/b/C.<ext>, else the package folder a/b/C or a/b."""
    parts = [p for p in module.split(".") if p]
    if name and name != "*":
        parts.append(name)
    if not parts:
        return []
    path = "/".join(parts)
    hit = file_by_suffix(index, path + extension)
    if hit is not None:
        return [hit]
    for folder in (path, posixpath.dirname(path)):
        files = folder_files(index, folder, language) if folder else []
        if files:
            return files
    return []


def snake(component: str) -> str:
    """Elixir's Macro.underscore for one alias component: "HTTPServer" -> "http_server"."""
    return CAMEL_BOUNDARY.sub("_", component).lower()


def elixir(index: Paths, module: str) -> int | None:
    return file_by_suffix(index, "/".join(snake(p) for p in module.split(".")) + ".ex")


def lua(index: Paths, module: str) -> int | None:
    path = module.replace(".", "/")
    return file_by_suffix(index, path + ".lua") or file_by_suffix(index, path + "/init.lua")


def haskell(index: Paths, module: str) -> int | None:
    return file_by_suffix(index, module.replace(".", "/") + ".hs")


def relative_or_suffix(index: Paths, importer: str, spec: str) -> int | None:
    """Zig `@import("x.zig")`, Bash `source`, Dart and Protobuf imports: beside the importer, else by suffix."""
    spec = SHELL_VARIABLE.sub("", spec.removeprefix("package:"))
    if not spec or "$" in spec:
        return None
    local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    hit = index.by_path.get(local)
    return hit if hit is not None else file_by_suffix(index, spec.lstrip("./"))
