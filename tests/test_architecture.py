"""The layering of services/ARCHITECTURE.md, checked on the source: no leg imports another leg, common/ imports
no service, no module imports the orchestrator but the entry points, no import circle, and no hand-written
module over the line limit."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "services" / "codesearch"
LEGS = {"keyword", "vector", "graph", "rerank"}
ENTRY_POINTS = {"cli", "mcp", "server"}  # compose services; may import anything
# The leg dump (eval/polyglot_run.py) asks each leg what the orchestrator's plan and router ask, and the harness
# reads fanout's boosted-query marker; the offline replay of the ranking itself is codesearch_lab/offline.py.
# Only the entry points import eval/.
RANKING_REPLAY = {"eval"}
# Imports between folders that exist today and are being removed by their owners: the list may only shrink.
KNOWN: dict[tuple[str, str], str] = {}


def folder_imports() -> set[tuple[str, str]]:
    """(importing folder, imported folder) for every import of codesearch.<folder> between different folders."""
    edges: set[tuple[str, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).parts
        if rel[0] == "v1":
            continue
        source = rel[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("codesearch."):
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("codesearch.")]
            for name in names:
                target = name.split(".")[1]
                if target != source:
                    edges.add((source, target))
    return edges


def test_no_leg_imports_another_leg_and_common_imports_no_service() -> None:
    edges = folder_imports()
    leg_to_leg = {(a, b) for a, b in edges if a in LEGS and b in LEGS}
    common_up = {(a, b) for a, b in edges if a == "common" and (b in LEGS or b == "orchestrator")}
    into_orchestrator = {
        (a, b) for a, b in edges if b == "orchestrator" and a not in ENTRY_POINTS | RANKING_REPLAY
    }
    leg_from_orchestrator = {(a, b) for a, b in edges if a == "orchestrator" and b in LEGS}
    replay_to_leg = {(a, b) for a, b in edges if a in RANKING_REPLAY and b in LEGS}
    found = leg_to_leg | common_up | into_orchestrator | leg_from_orchestrator | replay_to_leg
    assert found - set(KNOWN) == set(), f"imports across the layering: {sorted(found - set(KNOWN))}"
    stale = set(KNOWN) - found
    assert not stale, f"gone, so remove from KNOWN: {sorted(stale)}"


# A module per concept: one over this many lines holds more than one (ARCHITECTURE.md). Generated code is exempt.
MAX_MODULE_LINES = 420
GENERATED = ("v1/",)


def test_no_hand_written_module_is_over_the_line_limit() -> None:
    long = {
        rel: lines
        for path in PACKAGE.rglob("*.py")
        if not (rel := path.relative_to(PACKAGE).as_posix()).startswith(GENERATED)
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {long}"


def module_imports() -> dict[str, set[str]]:
    """codesearch module -> the codesearch modules it imports (anywhere in the file, a function's body too)."""
    modules = {
        ".".join(("codesearch", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
        if not p.relative_to(PACKAGE).as_posix().startswith(GENERATED)
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("codesearch"):
                for a in node.names:  # `from codesearch.rerank import text` imports the module rerank.text
                    sub = f"{node.module}.{a.name}"
                    found.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("codesearch."))
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_no_import_circle() -> None:
    graph = module_imports()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                circles.append([*path[path.index(n) :], n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not circles, f"import circles: {circles}"


def test_the_product_never_imports_the_laboratory() -> None:
    """services/codesearch_lab builds development sets and artifacts; the shipped package must run without it."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n == "codesearch_lab" or n.startswith("codesearch_lab.") for n in names):
                found.append(str(path.relative_to(PACKAGE)))
    assert not found, f"the product imports the laboratory: {found}"


def test_usearch_is_imported_only_through_the_vector_package() -> None:
    """onnxruntime segfaults while importing once usearch is loaded (vector/__init__.py): codesearch.vector loads
    it first, so every other module takes `Index` from there (codesearch_lab/bench/vector_recall.py, then in
    codesearch/bench/, crashed at start before)."""
    found = []
    for root in (PACKAGE, PACKAGE.parent / "codesearch_lab"):
        for path in root.rglob("*.py"):
            if path == PACKAGE / "vector" / "__init__.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if any(n == "usearch" or n.startswith("usearch.") for n in names):
                    found.append(str(path.relative_to(root.parent)))
    assert not found, f"usearch imported directly (import Index from codesearch.vector): {found}"


LEG_FOLDERS = ("keyword", "vector", "graph", "rerank", "orchestrator")
# Training and research code: the laboratory, and modules that left the package (moved to codesearch_lab or
# deleted, see services/codesearch_lab/RECIPES.md); no leg may import them, even if one came back.
TRAINING_MODULES = (
    "codesearch_lab",
    "codesearch.vector.static_train",
    "codesearch.vector.mode_models",
    "codesearch.vector.static_blend",
    "codesearch.rerank.train",
    "codesearch.rerank.finetune",
    "codesearch.rerank.blend_fit",
    "codesearch.rerank.pairs",
    "codesearch.rerank.doc_comments",
    "codesearch.eval.confidence_fit",
    "codesearch.eval.confidence_candidates",
    "codesearch.eval.learnt_rank",
    "codesearch.eval.offline",
    "codesearch.bench.vector_quality",
)


def test_no_leg_imports_training_code() -> None:
    """The serving path (every leg and the orchestrator) runs without the laboratory's builders and without the
    research modules that did not become a default."""
    found = []
    for leg in LEG_FOLDERS:
        for path in (PACKAGE / leg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names += [f"{node.module}.{a.name}" for a in node.names]
                names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
                bad = [n for n in names if any(n == m or n.startswith(m + ".") for m in TRAINING_MODULES)]
                if bad:
                    found.append(f"{path.relative_to(PACKAGE)}: {', '.join(sorted(set(bad)))}")
    assert not found, f"legs import training code: {found}"


def test_the_moved_and_deleted_modules_stay_out_of_the_package() -> None:
    present = [
        m
        for m in TRAINING_MODULES
        if m.startswith("codesearch.") and (PACKAGE.joinpath(*m.split(".")[1:]).with_suffix(".py")).exists()
    ]
    assert not present, f"training code back in the shipped package: {present}"


# `codesearch bench load|soak|scale` (cli/bench_cmd.py) and their helper; the developer benchmarks are in
# codesearch_lab/bench/ (issue 46). A benchmark comes back into the shipped package only by changing this set.
USER_BENCHMARKS = {"__init__", "load", "soak", "scale", "procs"}
# What those commands are: clients of a running server, and `codesearch serve` started as processes.
BENCH_IMPORTS = {"common", "config", "v1"}


def test_bench_holds_only_the_codesearch_bench_commands() -> None:
    bench = PACKAGE / "bench"
    present = {p.relative_to(bench).with_suffix("").as_posix() for p in bench.rglob("*.py")}
    extra, missing = sorted(present - USER_BENCHMARKS), sorted(USER_BENCHMARKS - present)
    assert not extra and not missing, (
        "codesearch/bench/ holds only the modules behind `codesearch bench` (developer benchmarks go to "
        f"codesearch_lab/bench/): extra {extra}, missing {missing}"
    )
    beyond = {(a, b) for a, b in folder_imports() if a == "bench" and b not in BENCH_IMPORTS}
    assert not beyond, f"bench/ imports beyond {sorted(BENCH_IMPORTS)}: {sorted(beyond)}"
