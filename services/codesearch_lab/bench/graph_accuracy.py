"""Accuracy and speed of the graph leg against Python's own `ast` over a Python corpus (the stdlib).

python -m codesearch_lab.bench.graph_accuracy --corpus /tmp/corpus/cpython-lib
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import random
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from codesearch.common.parsing import python_module
from codesearch.graph.query import GraphReader
from codesearch.graph.store import DB_NAME, build_generation, connect_readonly, parse_files

SAMPLE_NAMES = 200  # names timed for FindReferences / Impact latency
SEED = 7  # fixed so runs are comparable


def ast_truth(rel: str, source: bytes) -> tuple[set, set, list] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return None
    defs = {
        (rel, n.lineno, n.name)
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    calls = set()
    imports = []  # (path, line, module name imported, name or "")
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name):
                calls.add((rel, n.lineno, n.func.id))
            elif isinstance(n.func, ast.Attribute):
                calls.add((rel, n.lineno, n.func.attr))
        elif isinstance(n, ast.Import):
            imports += [(rel, n.lineno, a.name, "") for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            imports += [(rel, n.lineno, n.module, a.name) for a in n.names]
    return defs, calls, imports


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", required=True, help="the standard-library corpus to check against")
    args = ap.parse_args()
    root = Path(args.corpus)
    sources = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}
    n_lines = sum(s.count(b"\n") for s in sources.values())

    t0 = time.perf_counter()
    parsed = parse_files((p, "python", hashlib.sha256(s).hexdigest(), s) for p, s in sources.items())
    t_parse = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / DB_NAME
        t1 = time.perf_counter()
        build_generation(None, db, parsed, [], True, 1)
        t_build = time.perf_counter() - t1
        size = db.stat().st_size
        reader = GraphReader("bench", connect_readonly(db))

        truth_defs: set = set()
        truth_calls: set = set()
        truth_imports: list = []
        for rel, src in sources.items():
            t = ast_truth(rel, src)
            if t:
                truth_defs |= t[0]
                truth_calls |= t[1]
                truth_imports += t[2]
        kinds = ("function", "method", "class")
        got_defs = {(e.path, d.start_line, d.name) for e in parsed if e.extraction for d in e.extraction.definitions
                    if d.kind in kinds}  # fmt: skip
        got_calls = {(e.path, c.line, c.callee) for e in parsed if e.extraction for c in e.extraction.calls}
        def_recall = len(truth_defs & got_defs) / max(1, len(truth_defs))
        call_recall = len(truth_calls & got_calls) / max(1, len(truth_calls))

        # Imports of modules present in the corpus must resolve to that module's file (or to the submodule
        # file for `from pkg import submodule`).
        module_file = {python_module(p): p for p in sources}
        resolved = {
            (path, line, module, name): target
            for path, line, module, name, target in reader.conn.execute(
                "SELECT f.path, i.line, i.module, i.name, t.path FROM imports i JOIN files f ON f.id = i.file_id"
                " LEFT JOIN files t ON t.id = i.target_file_id WHERE i.level = 0"
            )
        }
        checked = correct = 0
        wrong: list[tuple] = []
        for path, line, module, name in truth_imports:
            expected = module_file.get(f"{module}.{name}") if name else None
            expected = expected or module_file.get(module)
            if expected is None or expected == path:
                continue
            checked += 1
            if resolved.get((path, line, module, name)) == expected:
                correct += 1
            elif len(wrong) < 5:
                wrong.append((path, line, module, name, expected, resolved.get((path, line, module, name))))
        import_acc = correct / max(1, checked)

        rng = random.Random(SEED)
        names = sorted({d[2] for d in truth_defs})
        sample = rng.sample(names, min(SAMPLE_NAMES, len(names)))
        modules = rng.sample(sorted(module_file), min(SAMPLE_NAMES, len(module_file)))

        def p50(fn, items) -> float:
            times = []
            for x in items:
                s = time.perf_counter()
                fn(x)
                times.append((time.perf_counter() - s) * 1000)
            return statistics.median(times)

        ref_ms = p50(lambda n: reader.references(n, 50), sample)
        def_ms = p50(lambda n: reader.lookup(n), sample)
        imp_mod_ms = p50(lambda m: reader.impact(m, 3, 200), modules)
        imp_sym_ms = p50(lambda n: reader.impact(n, 3, 200), sample)
        files, ndefs, edges, errors, _v = reader.stats()

    print(f"corpus: {len(sources)} files, {n_lines} lines")
    print(f"parse (extract) time: {t_parse:.2f}s; store build (insert+resolve+pagerank): {t_build:.2f}s")
    print(
        f"db size: {size / 1e6:.1f} MB; {ndefs} definitions, {edges} edges, {errors} files with parse errors"
    )
    print(f"definition recall: {def_recall:.4f} ({len(truth_defs & got_defs)}/{len(truth_defs)})")
    print(f"call-site recall: {call_recall:.4f} ({len(truth_calls & got_calls)}/{len(truth_calls)})")
    print(f"absolute-import resolution: {import_acc:.4f} ({correct}/{checked})")
    for w in wrong:
        print("  wrong import:", w)
    print(
        f"p50 latency over {len(sample)} names: FindDefinitions {def_ms:.2f} ms, FindReferences {ref_ms:.2f} ms,"
    )
    print(f"  Impact(symbol) {imp_sym_ms:.2f} ms, Impact(module) {imp_mod_ms:.2f} ms")


if __name__ == "__main__":
    main()
