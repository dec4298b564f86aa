"""The Python miner: ground truth for every query class from the standard library's `ast` (eval/mine.py lists
the classes)."""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from codesearch.common.text import first_sentence, split_identifier
from codesearch.config import DEFAULT_MAX_FILE_BYTES
from codesearch.eval.mine_candidates import Candidate

MIN_SYMBOL_CHARS = 4  # shorter names ("run", "get") are too generic to be a fair definition query
MIN_CALL_SITES = 2  # one call site is a definition query in disguise
MAX_CALL_SITES = 30  # beyond this recall@10 is capped by K, not by the system
MIN_IMPORTERS = 2  # as for call sites
MAX_IMPORTERS = 30  # as for call sites
MIN_MESSAGE_CHARS = 12  # short messages ("bad value") are not what people paste
MIN_SENTENCE_WORDS = 5  # fewer words say too little to find a definition by meaning
MAX_SENTENCE_WORDS = 40  # longer first "sentences" are usually unpunctuated paragraphs

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # what `_scan` records as a definition


def _occurs_once(corpus: str, text: str) -> bool:
    return corpus.count(text) == 1


def name_tokens(name: str) -> set[str]:
    """'BooleanOptionalAction' -> {booleanoptionalaction, boolean, optional, action}; '_rshift_nearest' ->
    {rshift_nearest, rshift, nearest}."""
    return {t for t in (name.lower().strip("_"), *split_identifier(name)) if t}


def remove_name_tokens(sentence: str, tokens: set[str]) -> tuple[str, int]:
    kept, removed = [], 0
    for w in sentence.split():
        core = re.sub(r"[^\w]", "", w).lower()
        if core and (core in tokens or core.strip("_") in tokens):
            removed += 1
        else:
            kept.append(w)
    return " ".join(kept), removed


def module_name(rel_path: str) -> str:
    parts = rel_path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclass
class _PyFile:
    path: str
    text: str
    tree: ast.Module


class PythonAstMiner:
    """Ground truth for Python files from the standard library's `ast`."""

    def handles(self, rel_path: str) -> bool:
        return rel_path.endswith(".py")

    def _parse(self, root: Path, rel_paths: Sequence[str]) -> list[_PyFile]:
        files: list[_PyFile] = []
        for rel in rel_paths:
            p = root / rel
            try:
                if p.stat().st_size > DEFAULT_MAX_FILE_BYTES:
                    continue
                text = p.read_bytes().decode("utf-8")
                tree = ast.parse(text, filename=rel)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            files.append(_PyFile(rel, text, tree))
        return files

    def mine(self, root: Path, rel_paths: Sequence[str]) -> dict[str, list[Candidate]]:
        files = self._parse(root, [p for p in rel_paths if self.handles(p)])
        defs: dict[str, list[tuple[str, _Def, str]]] = defaultdict(list)
        calls: dict[str, list[tuple[str, int]]] = defaultdict(list)
        raises: list[tuple[str, int, int, str, str]] = []
        for f in files:
            self._scan(f, defs, calls, raises)
        out: dict[str, list[Candidate]] = {
            "definition": self._definitions(defs),
            "references": self._references(defs, calls),
            "exact_match": self._exact(files, raises),
            "concept": self._concepts(defs),
            "impact": self._impact(files),
        }
        return out

    @staticmethod
    def _scan(
        f: _PyFile,
        defs: dict[str, list[tuple[str, _Def, str]]],
        calls: dict[str, list[tuple[str, int]]],
        raises: list[tuple[str, int, int, str, str]],
    ) -> None:
        stack: list[tuple[ast.AST, ast.AST | None]] = [(f.tree, None)]
        while stack:
            node, parent = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if isinstance(node, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if isinstance(parent, ast.ClassDef) else "function"
                defs[node.name].append((f.path, node, kind))
            elif isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name):
                    calls[fn.id].append((f.path, fn.lineno))
                elif isinstance(fn, ast.Attribute):
                    calls[fn.attr].append((f.path, fn.end_lineno or fn.lineno))
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                arg = node.exc.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    exc = node.exc.func
                    exc_name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", "")
                    raises.append((f.path, arg.lineno, node.lineno, arg.value, exc_name))
            for child in ast.iter_child_nodes(node):
                stack.append((child, node))

    @staticmethod
    def _unique_defs(defs: dict[str, list[tuple[str, _Def, str]]]) -> dict[str, tuple[str, _Def, str]]:
        return {
            name: sites[0]
            for name, sites in defs.items()
            if len(sites) == 1
            and len(name) >= MIN_SYMBOL_CHARS
            and not (name.startswith("__") and name.endswith("__"))
        }

    def _definitions(self, defs: dict[str, list[tuple[str, _Def, str]]]) -> list[Candidate]:
        out = []
        for name, (path, node, kind) in self._unique_defs(defs).items():
            line = node.lineno
            out.append(
                Candidate(
                    "definition",
                    (path, line, name),
                    [("bare", name), ("phrased", f"where is {name} defined")],
                    [{"path": path, "line": line, "end_line": line}],
                    {"symbol": name, "kind": kind, "def_span": [line, node.end_lineno]},
                )
            )
        return out

    def _references(
        self, defs: dict[str, list[tuple[str, _Def, str]]], calls: dict[str, list[tuple[str, int]]]
    ) -> list[Candidate]:
        out = []
        for name, (path, node, kind) in self._unique_defs(defs).items():
            sites = sorted(set(calls.get(name, [])))
            if not MIN_CALL_SITES <= len(sites) <= MAX_CALL_SITES or all(p == path for p, _ in sites):
                continue
            out.append(
                Candidate(
                    "references",
                    (path, node.lineno, name),
                    [("who_calls", f"who calls {name}"), ("usages_of", f"usages of {name}")],
                    [{"path": p, "line": ln, "end_line": ln} for p, ln in sites],
                    {
                        "symbol": name,
                        "kind": kind,
                        "definition": {"path": path, "line": node.lineno},
                        "n_call_sites": len(sites),
                        "n_files": len({p for p, _ in sites}),
                        "caveat": "call sites by name match of Name/Attribute calls; callbacks passed by reference not counted",
                    },
                    pick_one=True,
                )
            )
        return out

    @staticmethod
    def _exact(files: list[_PyFile], raises: list[tuple[str, int, int, str, str]]) -> list[Candidate]:
        texts = {f.path: f.text for f in files}
        lines = {f.path: f.text.splitlines() for f in files}
        counts = Counter(msg for _, _, _, msg, _ in raises)
        corpus = "\0".join(texts.values())
        out = []
        for path, line, raise_line, msg, exc in raises:
            src = lines[path][line - 1] if 0 < line <= len(lines[path]) else ""
            if (
                counts[msg] != 1
                or len(msg) < MIN_MESSAGE_CHARS
                or " " not in msg.strip()
                or any(c in msg for c in '"\n\r\t{}')
                or msg not in src
            ):
                continue
            out.append(
                Candidate(
                    "exact_match",
                    (path, line, msg),
                    [("quoted", f'"{msg}"')],
                    [{"path": path, "line": line, "end_line": line}],
                    {"exception": exc, "raise_line": raise_line},
                    verify=partial(_occurs_once, corpus, msg),
                )
            )
        return out

    def _concepts(self, defs: dict[str, list[tuple[str, _Def, str]]]) -> list[Candidate]:
        found = []
        for name, sites in defs.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            for path, node, kind in sites:
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                sentence = first_sentence(doc)
                n_words = len(sentence.split())
                if not MIN_SENTENCE_WORDS <= n_words <= MAX_SENTENCE_WORDS or ">>>" in sentence:
                    continue
                found.append((sentence, name, path, node, kind))
        counts = Counter(s for s, *_ in found)
        hards = {id(f[3]): remove_name_tokens(f[0], name_tokens(f[1])) for f in found}
        hard_counts = Counter(h for h, _ in hards.values())
        out = []
        for sentence, name, path, node, kind in found:
            hard, removed = hards[id(node)]
            # Both variants must point at one definition (write_text/write_bytes share a sentence once named).
            if counts[sentence] != 1 or hard_counts[hard] != 1 or len(hard.split()) < MIN_SENTENCE_WORDS - 1:
                continue
            # The span starts at the first decorator: decorators are part of the definition.
            line = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno
            out.append(
                Candidate(
                    "concept",
                    (path, line, name),
                    [("literal", sentence), ("hard", hard)],
                    [{"path": path, "line": line, "end_line": end}],
                    {
                        "symbol": name,
                        "kind": kind,
                        "name_tokens_removed": removed,
                        "same_as_literal": hard == sentence,
                    },
                )
            )
        return out

    @staticmethod
    def _impact(files: list[_PyFile]) -> list[Candidate]:
        modules = {module_name(f.path): f.path for f in files}
        importers: dict[str, dict[str, int]] = defaultdict(dict)  # module -> importing path -> first line
        for f in files:
            me = module_name(f.path)
            package = me if f.path.endswith("__init__.py") else me.rpartition(".")[0]
            for node in ast.walk(f.tree):
                targets: list[str] = []
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        parts = package.split(".") if package else []
                        up = node.level - 1
                        if up > len(parts):
                            continue
                        base_parts = parts[: len(parts) - up] + ([node.module] if node.module else [])
                        base = ".".join(p for p in base_parts if p)
                    else:
                        base = node.module or ""
                    targets = [base] + [f"{base}.{a.name}" if base else a.name for a in node.names]
                else:
                    continue
                for t in targets:
                    if t in modules and modules[t] != f.path:
                        prev = importers[t].get(f.path)
                        if prev is None or node.lineno < prev:
                            importers[t][f.path] = node.lineno
        out = []
        for mod, by_path in importers.items():
            if not MIN_IMPORTERS <= len(by_path) <= MAX_IMPORTERS:
                continue
            out.append(
                Candidate(
                    "impact",
                    (modules[mod], 0, mod),
                    [
                        ("depends_on", f"what depends on module {mod}"),
                        ("breaks_if", f"what breaks if I change {mod}"),
                    ],
                    [{"path": p, "line": ln, "end_line": ln} for p, ln in sorted(by_path.items())],
                    {
                        "module": mod,
                        "module_path": modules[mod],
                        "n_importers": len(by_path),
                        "caveat": "static import statements only (incl. relative and function-local); importlib/__import__ not counted",
                    },
                    pick_one=True,
                )
            )
        return out
