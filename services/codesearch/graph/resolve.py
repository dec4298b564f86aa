"""Import resolution (import/include/use/require -> repository files) and call resolution (name -> definitions)."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from codesearch.graph import module_paths

# Folders that are commonly the root of Python / other source trees, tried after the repository root.
SOURCE_ROOTS = ("", "src/", "lib/", "Lib/", "python/", "source/")
JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
C_INCLUDE_ROOTS = ("", "include/", "src/")
SELF_RECEIVERS = frozenset({"self", "cls", "this", "super()", "Self", "$this", "static", "self.__class__"})
MAX_EDGE_FANOUT = (
    16  # a call with more equally good candidates links to the first few only; `candidates` keeps the count
)
GO_MODULE_RE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
# Languages whose imports name a package path with dots, and the extension of their files. C# is left out: its
# `using` names a namespace, i.e. every file of a folder (newtonsoft-json: 9,685 edges from 240 files), which would
# pour PageRank onto utility folders.
DOTTED_EXTENSIONS = {"kotlin": ".kt", "scala": ".scala"}


@dataclass(slots=True)
class ImportRow:
    """One imported name (or the module itself when name is "") of one import statement, as stored."""

    file_id: int
    module: str
    line: int
    level: int
    name: str
    alias: str
    kind: str


class FileIndex:
    """Paths of a repository, for resolving import specs to file ids."""

    def __init__(
        self, files: Iterable[tuple[int, str, str]], go_modules: dict[str, str] | None = None
    ) -> None:
        self.by_path: dict[str, int] = {}
        self.language: dict[int, str] = {}
        self.path_of: dict[int, str] = {}
        self.by_dir: dict[str, list[int]] = defaultdict(list)
        self.by_base: dict[str, list[str]] = defaultdict(list)
        for fid, path, lang in files:
            self.by_path[path] = fid
            self.language[fid] = lang
            self.path_of[fid] = path
            self.by_dir[posixpath.dirname(path)].append(fid)
            self.by_base[posixpath.basename(path)].append(path)
        # go.mod folder -> module path, longest folder first so nested modules win
        self.go_modules = sorted((go_modules or {}).items(), key=lambda kv: -len(kv[0]))

    def _first(self, candidates: Iterable[str]) -> int | None:
        for c in candidates:
            fid = self.by_path.get(c)
            if fid is not None:
                return fid
        return None

    # --- Python -------------------------------------------------------------------------------------------
    def python_module_file(self, root: str, dotted: str) -> int | None:
        base = root + dotted.replace(".", "/") if dotted else root.rstrip("/")
        if not base:
            return None
        return self._first((base + ".py", base + "/__init__.py", base + ".pyi", base + "/__init__.pyi"))

    def _python_roots(self, importer: str) -> list[str]:
        roots = list(SOURCE_ROOTS)
        parts = importer.split("/")[:-1]
        roots += ["/".join(parts[: i + 1]) + "/" for i in range(len(parts))]
        return roots

    def resolve_python(self, importer: str, module: str, level: int, name: str) -> int | None:
        if level > 0:
            parts = importer.split("/")[:-1]
            if level - 1 > len(parts):
                return None
            parts = parts[: len(parts) - (level - 1)]
            root = "/".join(parts) + "/" if parts else ""
            if name and name != "*":
                sub = self.python_module_file(root, f"{module}.{name}" if module else name)
                if sub is not None:
                    return sub
            return self.python_module_file(root, module)
        for root in self._python_roots(importer):
            if name and name != "*":
                sub = self.python_module_file(root, f"{module}.{name}")
                if sub is not None:
                    return sub
            hit = self.python_module_file(root, module)
            if hit is not None:
                return hit
        return None

    # --- other languages ------------------------------------------------------------------------------------
    def resolve_js(self, importer: str, spec: str) -> int | None:
        if not spec.startswith((".", "/")):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec)).lstrip("/")
        stem = re.sub(r"\.(js|jsx|mjs|cjs)$", "", base)  # TS sources import "./x.js" meaning ./x.ts
        cands = [base] + [stem + e for e in JS_EXTENSIONS] + [base + "/index" + e for e in JS_EXTENSIONS]
        return self._first(cands)

    def resolve_go(self, spec: str) -> list[int]:
        for folder, mod in self.go_modules:
            if spec == mod or spec.startswith(mod + "/"):
                rel = posixpath.join(folder, spec[len(mod) :].lstrip("/")).strip("/")
                return [f for f in self.by_dir.get(rel, []) if self.language.get(f) == "go"]
        return []

    def resolve_rust(self, importer: str, spec: str, kind: str) -> int | None:
        folder, base = posixpath.split(importer)
        stem = base[:-3] if base.endswith(".rs") else base
        mod_dir = folder if stem in ("mod", "lib", "main") else posixpath.join(folder, stem)
        if kind == "mod":
            return self._first(
                (posixpath.join(mod_dir, spec + ".rs"), posixpath.join(mod_dir, spec, "mod.rs"))
            )
        parts = [p for p in spec.split("::") if p]
        if not parts:
            return None
        if parts[0] == "crate":
            root = importer[: importer.index("src/") + 4] if "src/" in importer else ""
            start, parts = root.rstrip("/"), parts[1:]
        elif parts[0] == "self":
            start, parts = mod_dir, parts[1:]
        elif parts[0] == "super":
            start = posixpath.dirname(mod_dir)
            parts = parts[1:]
            while parts and parts[0] == "super":
                start, parts = posixpath.dirname(start), parts[1:]
        else:
            return None
        for n in range(len(parts), 0, -1):
            p = posixpath.join(start, *parts[:n])
            hit = self._first((p + ".rs", p + "/mod.rs"))
            if hit is not None:
                return hit
        return None

    def _suffix(self, suffix: str) -> list[str]:
        base = posixpath.basename(suffix)
        return [p for p in self.by_base.get(base, []) if p == suffix or p.endswith("/" + suffix)]

    def resolve_java(self, spec: str) -> list[int]:
        parts = spec.split(".")
        if parts[-1] == "*":
            suffix = "/".join(parts[:-1])
            return [
                f
                for d, fids in self.by_dir.items()
                if d == suffix or d.endswith("/" + suffix)
                for f in fids
                if self.language.get(f) == "java"
            ]
        for n in range(
            len(parts), 1, -1
        ):  # static imports name a member: drop components until a file matches
            hits = self._suffix("/".join(parts[:n]) + ".java")
            if hits:
                return [self.by_path[h] for h in hits[:1]]
        # The indexed root sits inside the package tree (src/main/java/org/x): match a shorter tail.
        for n in range(len(parts), 0, -1):
            hit = module_paths.file_by_suffix(self, "/".join(parts[:n]) + ".java")
            if hit is not None:
                return [hit]
        return []

    def resolve_c(self, importer: str, spec: str, kind: str) -> int | None:
        cands = (
            []
            if kind == "system"
            else [posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))]
        )
        cands += [r + spec for r in C_INCLUDE_ROOTS]
        hit = self._first(cands)
        if hit is None and kind != "system":
            matches = self._suffix(spec)
            if len(matches) == 1:
                hit = self.by_path[matches[0]]
        return hit

    def resolve_ruby(self, importer: str, spec: str, kind: str) -> int | None:
        name = spec if spec.endswith(".rb") else spec + ".rb"
        if kind == "require_relative":
            return self._first((posixpath.normpath(posixpath.join(posixpath.dirname(importer), name)),))
        return self._first((name, "lib/" + name))

    def resolve_php(self, importer: str, spec: str, kind: str) -> int | None:
        if kind == "require":
            spec = spec.lstrip("/")
            return self._first((posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec)), spec))
        parts = spec.split("\\")
        for n in range(len(parts), 0, -1):
            hits = self._suffix("/".join(parts[-n:]) + ".php")
            if len(hits) == 1:
                return self.by_path[hits[0]]
        return None

    def resolve(self, language: str, importer: str, row: ImportRow) -> list[int]:
        """Files an import row refers to; empty when it is external or unknown."""
        lang = language
        hit: int | None = None
        if lang == "python":
            hit = self.resolve_python(importer, row.module, row.level, row.name)
        elif lang in ("javascript", "typescript", "tsx"):
            hit = self.resolve_js(importer, row.module)
        elif lang == "go":
            return self.resolve_go(row.module)
        elif lang == "rust":
            hit = self.resolve_rust(
                importer, f"{row.module}::{row.name}" if row.name else row.module, row.kind
            )
            if hit is None and row.name:
                hit = self.resolve_rust(importer, row.module, row.kind)
        elif lang == "java":
            return self.resolve_java(row.module)
        elif lang in ("c", "cpp"):
            hit = self.resolve_c(importer, row.module, row.kind)
        elif lang == "ruby":
            hit = self.resolve_ruby(importer, row.module, row.kind)
        elif lang == "php":
            hit = self.resolve_php(importer, row.module, row.kind)
        elif lang in DOTTED_EXTENSIONS:
            return module_paths.dotted(self, lang, row.module, row.name, DOTTED_EXTENSIONS[lang])
        elif lang == "objc":
            hit = self.resolve_c(importer, row.module, row.kind)
        elif lang == "elixir":
            hit = module_paths.elixir(self, row.module)
        elif lang == "lua":
            hit = module_paths.lua(self, row.module)
        elif lang == "haskell":
            hit = module_paths.haskell(self, row.module)
        elif lang in ("zig", "bash", "dart", "protobuf"):
            hit = module_paths.relative_or_suffix(self, importer, row.module)
        return [] if hit is None else [hit]


def go_module_of(content: bytes) -> str:
    m = GO_MODULE_RE.search(content.decode("utf-8", "replace"))
    return m.group(1) if m else ""


@dataclass(slots=True)
class DefInfo:
    id: int
    file_id: int
    qname: str
    parent: str
    kind: str


@dataclass
class CallContext:
    """What call resolution needs to know about the repository, loaded once per update."""

    by_name: dict[str, list[DefInfo]] = field(default_factory=lambda: defaultdict(list))
    dir_of: dict[int, str] = field(default_factory=dict)
    imported_files: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    alias_files: dict[int, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    name_files: dict[int, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))

    def add_import(self, file_id: int, row: ImportRow, target: int) -> None:
        self.imported_files[file_id].add(target)
        if row.name and row.name != "*":
            local = row.alias or row.name
            self.name_files[file_id][local] = target
            self.alias_files[file_id][local] = target  # `from pkg import mod; mod.f()`
        else:
            self.alias_files[file_id][row.alias or row.module] = target


def resolve_call(ctx: CallContext, file_id: int, caller_qname: str, callee: str, receiver: str) -> list[int]:
    """Candidate definitions of a call, best tier only, in a stable order. Tiers: the module a receiver names,
    the caller's own class for self/this, the same file, the file the name was imported from, imported files,
    the same folder, anywhere."""
    cands = ctx.by_name.get(callee)
    if not cands:
        return []
    if len(cands) == 1:
        return [cands[0].id]
    if receiver:
        target = ctx.alias_files.get(file_id, {}).get(receiver)
        if target is not None:
            tier = [d.id for d in cands if d.file_id == target]
            if tier:
                return tier
        if receiver in SELF_RECEIVERS and caller_qname:
            tier = [
                d.id
                for d in cands
                if d.file_id == file_id and d.parent and caller_qname.startswith(d.parent + ".")
            ]
            if tier:
                return tier
    same = [d for d in cands if d.file_id == file_id]
    if same:
        return [d.id for d in same]
    target = ctx.name_files.get(file_id, {}).get(callee)
    if target is not None:
        tier = [d.id for d in cands if d.file_id == target]
        if tier:
            return tier
    imported = ctx.imported_files.get(file_id)
    if imported:
        tier = [d.id for d in cands if d.file_id in imported]
        if tier:
            return tier
    folder = ctx.dir_of.get(file_id)
    tier = [d.id for d in cands if ctx.dir_of.get(d.file_id) == folder]
    if tier:
        return tier
    return [d.id for d in cands]
