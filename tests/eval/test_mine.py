"""The miner over a small Python repository written here: expected queries, deterministic for a seed."""

from __future__ import annotations

import json
from pathlib import Path

from codesearch.cli.eval_cmd import main as eval_main
from codesearch.eval.mine import mine_queries
from codesearch.eval.mine_python import name_tokens

FILES = {
    "pkg/__init__.py": "from .core import Engine\n",
    "pkg/core.py": '''"""Core of the package."""


class Engine:
    """Drives the widget pipeline from start to finish."""

    def start_engine(self):
        """Start spinning the turbine blades slowly."""
        raise RuntimeError("engine already running somewhere")

    def stop(self):
        raise ValueError("bad")


def compute_total(values):
    """Add every number of the sequence together quickly."""
    return sum(values)


def helper(x):
    return compute_total([x])


@functools.cache
def decorated_worker():
    """Process queued jobs in the background thread."""
    return 1
''',
    "pkg/util.py": """import pkg.core
from pkg.core import compute_total


def twice(values):
    first = compute_total(values)
    return first + (pkg.core
                    .compute_total(values))


def helper(y):
    raise KeyError("duplicate message here")


def other():
    raise KeyError("duplicate message here")
""",
    "app.py": """from pkg import core

core.compute_total([1])
core.Engine().start_engine()
""",
    "notes.txt": "compute_total is documented here but this is not Python\n",
    ".hidden/skip.py": "def hidden_function():\n    pass\n",
}


def write_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def gold(*spans: tuple[str, int, int]) -> list[dict[str, object]]:
    return [{"path": p, "line": a, "end_line": b} for p, a, b in spans]


def test_mine_expected_queries(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    queries, report = mine_queries(root, seed=3, per_class=100)
    got = {(q.klass, q.variant, q.query): q.gold for q in queries}

    # Definitions: names defined once, >= 4 characters ("stop" qualifies; "helper" is defined twice).
    for name, path, line in [
        ("Engine", "pkg/core.py", 4),
        ("start_engine", "pkg/core.py", 7),
        ("stop", "pkg/core.py", 11),
        ("compute_total", "pkg/core.py", 15),
        ("twice", "pkg/util.py", 5),
        ("other", "pkg/util.py", 15),
        ("decorated_worker", "pkg/core.py", 25),
    ]:
        assert got[("definition", "bare", name)] == gold((path, line, line))
        assert got[("definition", "phrased", f"where is {name} defined")] == gold((path, line, line))
    assert not any(k[2] in ("helper", "hidden_function") for k in got)
    assert report.found["definition"] == 7

    # References: compute_total has 4 call sites over 3 files; other names have fewer than 2 sites.
    refs = [(k, v) for k, v in got.items() if k[0] == "references"]
    assert len(refs) == 1
    (klass, variant, query), g = refs[0]
    assert query in ("who calls compute_total", "usages of compute_total")
    # A call split over lines counts at the line of the called name.
    assert g == gold(("app.py", 3, 3), ("pkg/core.py", 21, 21), ("pkg/util.py", 6, 6), ("pkg/util.py", 8, 8))

    # Exact strings: the unique, long message only ("bad" is short; the duplicated one occurs twice).
    exact = {k[2]: v for k, v in got.items() if k[0] == "exact_match"}
    assert exact == {'"engine already running somewhere"': gold(("pkg/core.py", 9, 9))}

    # Impact: pkg.core is imported by pkg/__init__.py (relative), pkg/util.py and app.py (from pkg import core).
    impact = [(k, v) for k, v in got.items() if k[0] == "impact"]
    assert len(impact) == 1
    assert impact[0][0][2] in ("what depends on module pkg.core", "what breaks if I change pkg.core")
    assert impact[0][1] == gold(("app.py", 1, 1), ("pkg/__init__.py", 1, 1), ("pkg/util.py", 1, 1))

    # Concept: literal first sentence and the same without the symbol's name tokens, gold = the def span.
    assert got[("concept", "literal", "Start spinning the turbine blades slowly.")] == gold(
        ("pkg/core.py", 7, 9)
    )
    assert got[("concept", "hard", "spinning the turbine blades slowly.")] == gold(("pkg/core.py", 7, 9))
    assert got[("concept", "literal", "Drives the widget pipeline from start to finish.")] == gold(
        ("pkg/core.py", 4, 12)
    )
    assert got[("concept", "hard", "Add every number of the sequence together quickly.")] == gold(
        ("pkg/core.py", 15, 17)
    )
    # A decorated definition's span starts at its decorator (its definition query still points at `def`).
    assert got[("concept", "literal", "Process queued jobs in the background thread.")] == gold(
        ("pkg/core.py", 24, 27)
    )
    assert report.chosen == {"definition": 7, "references": 1, "exact_match": 1, "concept": 4, "impact": 1}


def test_mine_is_deterministic(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    outs = []
    for i, seed in enumerate((11, 11, 12)):
        out = tmp_path / f"q{i}.jsonl"
        assert (
            eval_main(["--mine", str(root), "--out", str(out), "--seed", str(seed), "--per-class", "2"]) == 0
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    rows = [json.loads(line) for line in outs[0].decode().splitlines()]
    assert {r["klass"] for r in rows} == {"definition", "references", "exact_match", "concept", "impact"}
    # Two definitions drawn out of seven, each as a bare and a phrased query.
    assert sum(r["klass"] == "definition" for r in rows) == 4
    assert all(set(r) == {"id", "klass", "variant", "query", "gold", "notes"} for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


def test_name_tokens() -> None:
    assert name_tokens("BooleanOptionalAction") >= {"boolean", "optional", "action"}
    assert name_tokens("_rshift_nearest") >= {"rshift", "nearest"}
    assert name_tokens("HTTPServer") >= {"http", "server"}
