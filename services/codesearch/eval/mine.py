"""Mines a query set with ground truth from a repository's own code (dev-queries.jsonl's schema and classes).

Miners sit behind `GroundTruthMiner`: each handles some files and proposes candidates per class; the sampler
picks per class with a seeded RNG, so the same repository and seed give the same file. `PythonAstMiner` reads
Python with `ast`; other languages can be added as miners (e.g. from the graph leg) without touching the rest.

Classes (Python miner):
  definition   `X` / `where is X defined` -> the def/class line; only names defined once in the repository.
  references   `who calls X` / `usages of X` -> call-site lines (Name/Attribute calls by name) of a name defined
               once, 2..30 sites, at least one outside the defining file.
  exact_match  `"<message>"` of a `raise E("...")` -> the message's line; only messages that occur once in the
               repository's text.
  impact       `what depends on module M` / `what breaks if I change M` -> each importing file (first import
               line); static imports only, relative ones resolved; 2..30 importers.
  concept      a docstring's first sentence (`literal`) and the same with the symbol's name tokens removed
               (`hard`) -> the definition's span.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from codesearch.common.walker import is_hidden, walk
from codesearch.config import DEFAULT_MAX_FILE_BYTES
from codesearch.eval.runfile import Query

MIN_SYMBOL_CHARS = 4  # shorter names ("run", "get") are too generic to be a fair definition query
MIN_CALL_SITES = 2  # one call site is a definition query in disguise
MAX_CALL_SITES = 30  # beyond this recall@10 is capped by K, not by the system
MIN_IMPORTERS = 2  # as for call sites
MAX_IMPORTERS = 30  # as for call sites
MIN_MESSAGE_CHARS = 12  # short messages ("bad value") are not what people paste
MIN_SENTENCE_WORDS = 5  # fewer words say too little to find a definition by meaning
MAX_SENTENCE_WORDS = 40  # longer first "sentences" are usually unpunctuated paragraphs
MAX_FILE_BYTES = 1 << 20  # generated or data files; the indexer skips them too
CLASS_PREFIX = {
    "definition": "def",
    "references": "ref",
    "exact_match": "exact",
    "concept": "concept",
    "impact": "impact",
}
CLASS_ORDER = ("definition", "references", "exact_match", "concept", "impact")
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s")
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass
class Candidate:
    """A possible query: `variants` are (variant, query) pairs; `pick_one` keeps one variant per candidate."""

    klass: str
    key: tuple[Any, ...]  # stable sort key: candidates are sorted before the seeded draw
    variants: list[tuple[str, str]]
    gold: list[dict[str, Any]]
    notes: dict[str, Any]
    pick_one: bool = False
    # A check too costly for every candidate, run only on drawn ones (e.g. uniqueness in the whole text).
    verify: Callable[[], bool] | None = field(default=None, compare=False, repr=False)


class GroundTruthMiner(Protocol):
    def handles(self, rel_path: str) -> bool: ...

    def mine(self, root: Path, rel_paths: Sequence[str]) -> dict[str, list[Candidate]]: ...


def walk_repository(root: Path) -> list[str]:
    """Relative '/'-separated paths of the files the indexer would index (common/walker.py), sorted, without
    hidden ones: a query is mined only from code the index holds."""
    return [f.rel_path for f in walk(root, DEFAULT_MAX_FILE_BYTES).files if not is_hidden(f.rel_path)]


def name_tokens(name: str) -> set[str]:
    """'BooleanOptionalAction' -> {boolean, optional, action}; '_rshift_nearest' -> {rshift, nearest}."""
    toks = {name.lower().strip("_")}
    for part in name.split("_"):
        toks |= {t.lower() for t in CAMEL_RE.findall(part)}
    return {t for t in toks if t}


def first_sentence(doc: str) -> str:
    para = doc.strip().split("\n\n", 1)[0]
    text = " ".join(para.split())
    return SENTENCE_END_RE.split(text, maxsplit=1)[0].strip()


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
                if p.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = p.read_bytes().decode("utf-8")
                tree = ast.parse(text, filename=rel)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            files.append(_PyFile(rel, text, tree))
        return files

    def mine(self, root: Path, rel_paths: Sequence[str]) -> dict[str, list[Candidate]]:
        files = self._parse(root, [p for p in rel_paths if self.handles(p)])
        defs: dict[str, list[tuple[str, ast.AST, str]]] = defaultdict(list)
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
        defs: dict[str, list[tuple[str, ast.AST, str]]],
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
    def _unique_defs(defs: dict[str, list[tuple[str, ast.AST, str]]]) -> dict[str, tuple[str, ast.AST, str]]:
        return {
            name: sites[0]
            for name, sites in defs.items()
            if len(sites) == 1
            and len(name) >= MIN_SYMBOL_CHARS
            and not (name.startswith("__") and name.endswith("__"))
        }

    def _definitions(self, defs: dict[str, list[tuple[str, ast.AST, str]]]) -> list[Candidate]:
        out = []
        for name, (path, node, kind) in self._unique_defs(defs).items():
            line = node.lineno  # type: ignore[attr-defined]
            out.append(
                Candidate(
                    "definition",
                    (path, line, name),
                    [("bare", name), ("phrased", f"where is {name} defined")],
                    [{"path": path, "line": line, "end_line": line}],
                    {"symbol": name, "kind": kind, "def_span": [line, node.end_lineno]},  # type: ignore[attr-defined]
                )
            )
        return out

    def _references(
        self, defs: dict[str, list[tuple[str, ast.AST, str]]], calls: dict[str, list[tuple[str, int]]]
    ) -> list[Candidate]:
        out = []
        for name, (path, node, kind) in self._unique_defs(defs).items():
            sites = sorted(set(calls.get(name, [])))
            if not MIN_CALL_SITES <= len(sites) <= MAX_CALL_SITES or all(p == path for p, _ in sites):
                continue
            out.append(
                Candidate(
                    "references",
                    (path, node.lineno, name),  # type: ignore[attr-defined]
                    [("who_calls", f"who calls {name}"), ("usages_of", f"usages of {name}")],
                    [{"path": p, "line": ln, "end_line": ln} for p, ln in sites],
                    {
                        "symbol": name,
                        "kind": kind,
                        "definition": {"path": path, "line": node.lineno},  # type: ignore[attr-defined]
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
                    verify=lambda m=msg: corpus.count(m) == 1,
                )
            )
        return out

    def _concepts(self, defs: dict[str, list[tuple[str, ast.AST, str]]]) -> list[Candidate]:
        found = []
        for name, sites in defs.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            for path, node, kind in sites:
                doc = ast.get_docstring(node)  # type: ignore[arg-type]
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
            decorators = getattr(node, "decorator_list", [])
            line = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
            end = node.end_lineno  # type: ignore[attr-defined]
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
                for t in targets:
                    if t in modules and modules[t] != f.path:
                        prev = importers[t].get(f.path)
                        if prev is None or node.lineno < prev:  # type: ignore[attr-defined]
                            importers[t][f.path] = node.lineno  # type: ignore[attr-defined]
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


def default_miners() -> list[GroundTruthMiner]:
    return [PythonAstMiner()]


@dataclass
class MineReport:
    """Per class: candidates found and candidates written."""

    found: dict[str, int]
    chosen: dict[str, int]

    def format(self) -> str:
        lines = [f"{'class':<14}{'found':>8}{'chosen':>8}"]
        for k in self.found:
            lines.append(f"{k:<14}{self.found[k]:>8}{self.chosen.get(k, 0):>8}")
        return "\n".join(lines)


def draw(klass: str, cands: list[Candidate], seed: int, per_class: int) -> list[Candidate]:
    """Seeded, order-independent draw of up to per_class candidates that pass their `verify` check."""
    rng = random.Random(f"{seed}:{klass}")
    pool = sorted(cands, key=lambda c: c.key)
    rng.shuffle(pool)
    chosen = []
    for c in pool:
        if len(chosen) >= per_class:
            break
        if c.verify is None or c.verify():
            chosen.append(c)
    return sorted(chosen, key=lambda c: c.key)


def mine_queries(
    root: Path, seed: int = 0, per_class: int = 50, miners: Iterable[GroundTruthMiner] | None = None
) -> tuple[list[Query], MineReport]:
    root = Path(root)
    paths = walk_repository(root)
    cands: dict[str, list[Candidate]] = defaultdict(list)
    for miner in miners if miners is not None else default_miners():
        for klass, cs in miner.mine(root, [p for p in paths if miner.handles(p)]).items():
            cands[klass] += cs
    classes = [k for k in CLASS_ORDER if k in cands] + sorted(k for k in cands if k not in CLASS_ORDER)
    queries: list[Query] = []
    report = MineReport(found={}, chosen={})
    for klass in classes:
        chosen = draw(klass, cands[klass], seed, per_class)
        report.found[klass] = len(cands[klass])
        report.chosen[klass] = len(chosen)
        rng = random.Random(f"{seed}:{klass}:variants")
        prefix = CLASS_PREFIX.get(klass, klass)
        for i, c in enumerate(chosen):
            variants = [rng.choice(c.variants)] if c.pick_one else c.variants
            for variant, text in variants:
                qid = f"{prefix}-{i:03d}" + ("" if c.pick_one or len(c.variants) == 1 else f"-{variant}")
                queries.append(Query(qid, klass, variant, text, c.gold, c.notes))
    return queries, report
