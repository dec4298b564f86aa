"""Our scorer must give score.py's numbers on the same run file (score.py runs as a subprocess)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.eval.metrics import ndcg, summarize
from codesearch.eval.runfile import load_queries, read_run

SHARED_EVAL = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
SCORE_PY = SHARED_EVAL / "score.py"
DEV_QUERIES = SHARED_EVAL / "dev-queries.jsonl"
SCORE_FIELDS = (
    "n",
    "hit1",
    "hit10",
    "mrr10",
    "recall10",
    "recall10cap",
    "zero",
    "lat_p50_ms",
    "lat_p95_ms",
    "missing",
)

pytestmark = pytest.mark.skipif(not SCORE_PY.exists(), reason="../shared/eval/score.py not beside the repo")


def g(path: str, line: int, end: int | None = None) -> dict[str, Any]:
    return {"path": path, "line": line, "end_line": line if end is None else end}


QUERIES = [
    # definition: gold line 10; the ±3 window edges are 7 and 13.
    {"id": "d-edge-hi", "klass": "definition", "variant": "bare", "query": "f", "gold": [g("a.py", 10)]},
    {"id": "d-edge-lo", "klass": "definition", "variant": "bare", "query": "f", "gold": [g("a.py", 10)]},
    {"id": "d-out", "klass": "definition", "variant": "phrased", "query": "f", "gold": [g("a.py", 10)]},
    {"id": "d-reversed", "klass": "definition", "variant": "phrased", "query": "f", "gold": [g("a.py", 10)]},
    {"id": "d-weird", "klass": "definition", "variant": "bare", "query": "f", "gold": [g("a.py", 1)]},
    {"id": "d-eleventh", "klass": "definition", "variant": "bare", "query": "f", "gold": [g("a.py", 50)]},
    {"id": "d-missing", "klass": "definition", "variant": "bare", "query": "f", "gold": [g("a.py", 5)]},
    # references: duplicates of one file must not raise recall; 12 gold files for R@10cap.
    {
        "id": "r-dup",
        "klass": "references",
        "variant": "who_calls",
        "query": "who calls f",
        "gold": [g("b.py", 3), g("b.py", 9), g("c.py", 4)],
    },
    {
        "id": "r-many",
        "klass": "references",
        "variant": "usages_of",
        "query": "usages of f",
        "gold": [g(f"m{i}.py", 1) for i in range(12)],
    },
    {
        "id": "r-empty",
        "klass": "references",
        "variant": "usages_of",
        "query": "usages of f",
        "gold": [g("b.py", 1)],
    },
    # exact_match / concept: spans overlap rules.
    {"id": "e-1", "klass": "exact_match", "variant": "quoted", "query": '"x"', "gold": [g("e.py", 100)]},
    {
        "id": "c-span",
        "klass": "concept",
        "variant": "literal",
        "query": "does x",
        "gold": [g("c.py", 20, 40)],
    },
    {"id": "c-span2", "klass": "concept", "variant": "hard", "query": "does", "gold": [g("c.py", 20, 40)]},
    {
        "id": "i-1",
        "klass": "impact",
        "variant": "depends_on",
        "query": "what depends on module m",
        "gold": [g("x.py", 1), g("y.py", 2)],
    },
    {"id": "s-1", "klass": "semantic", "variant": "paraphrase", "query": "q", "gold": [g("s.py", 5, 9)]},
]

RUN: list[dict[str, Any]] = [
    {"id": "d-edge-hi", "results": [g("a.py", 13), g("a.py", 10)], "latency_ms": 5},
    {"id": "d-edge-lo", "results": [g("a.py", 14), {"path": "a.py", "line": 7}], "latency_ms": 2.5},
    {"id": "d-out", "results": [g("a.py", 14, 20), g("b.py", 10), g("a.py", 0, 6)], "latency_ms": 9.0},
    {"id": "d-reversed", "results": [{"path": "a.py", "line": 30, "end_line": 12}], "latency_ms": 1.25},
    {
        "id": "d-weird",
        "results": [
            {"path": "a.py", "line": "x"},
            {"path": "a.py", "line": None, "end_line": None},
            {"path": "a.py", "line": "2", "end_line": "3"},
        ],
        "latency_ms": True,
    },
    {"id": "d-eleventh", "results": [g("a.py", 1)] * 10 + [g("a.py", 50)]},
    {
        "id": "r-dup",
        "results": [g("b.py", 3), g("b.py", 9), g("b.py", 40), g("z.py", 1), g("c.py", 4)],
        "latency_ms": 3.0,
    },
    {
        "id": "r-many",
        "results": [g(f"m{i}.py", 1) for i in range(0, 16, 2)] + [g("m1.py", 1)],
        "latency_ms": 4.0,
    },
    {"id": "r-empty", "results": [], "latency_ms": 0.5},
    {"id": "e-1", "results": [g("e.py", 97), g("e.py", 100)], "latency_ms": 7.0},
    {"id": "c-span", "results": [g("c.py", 1, 16), g("c.py", 41, 60)], "latency_ms": 8.0},
    {"id": "c-span2", "results": [g("c.py", 1, 17)]},
    {"id": "i-1", "results": [g("y.py", 1), g("y.py", 1), g("x.py", 99)], "latency_ms": 11.0},
    {"id": "s-1", "results": [g("t.py", 5), g("s.py", 12, 14)], "latency_ms": 6.0},
    {"id": "not-a-query", "results": [g("a.py", 1)]},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score_py(run: Path, queries: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / "score.json"
    subprocess.run(
        [
            sys.executable,
            str(SCORE_PY),
            str(run),
            "--queries",
            str(queries),
            "--variants",
            "--json",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return json.loads(out.read_text())["summary"]


def assert_same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert list(ours) == list(theirs)
    for row, s in theirs.items():
        for f in SCORE_FIELDS:
            assert ours[row][f] == s[f], f"{row}.{f}: ours {ours[row][f]} != score.py {s[f]}"


def test_tricky_run_equals_score_py(tmp_path: Path) -> None:
    qpath = write_jsonl(tmp_path / "q.jsonl", QUERIES)
    rpath = write_jsonl(tmp_path / "run.jsonl", RUN)
    ours = summarize(load_queries(qpath), read_run(rpath))
    theirs = score_py(rpath, qpath, tmp_path)
    assert_same(ours, theirs)
    # The CLI's --score gives the same rows.
    assert eval_main([str(qpath), "--score", str(rpath), "--out", str(tmp_path / "out")]) == 0
    cli = json.loads((tmp_path / "out" / "summary.json").read_text())["runs"]["run"]["summary"]
    assert_same(cli, theirs)
    # Spot checks that the tricky cases did what they are meant to.
    assert ours["references"]["recall10"] == round((2 / 2 + 7 / 12 + 0) / 3, 4)
    assert ours["definition"]["missing"] == 1


@pytest.mark.skipif(not DEV_QUERIES.exists(), reason="dev-queries.jsonl not present")
def test_perturbed_dev_run_equals_score_py(tmp_path: Path) -> None:
    """Every dev query, answered by a seeded mix of right, near, shifted, wrong, duplicated and empty results."""
    rng = random.Random(7)
    queries = [json.loads(line) for line in DEV_QUERIES.read_text().splitlines() if line.strip()]
    run = []
    for q in queries:
        if rng.random() < 0.05:
            continue  # missing from the run
        results: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 14)):
            gold = rng.choice(q["gold"])
            shift = rng.randint(-6, 6)
            path = gold["path"] if rng.random() < 0.6 else rng.choice(queries)["gold"][0]["path"]
            results.append(
                {
                    "path": path,
                    "line": gold["line"] + shift,
                    "end_line": gold["end_line"] + shift + rng.randint(0, 3),
                    "score": rng.random(),
                }
            )
            if rng.random() < 0.2:
                results.append(dict(results[-1]))
        run.append({"id": q["id"], "results": results, "latency_ms": round(rng.uniform(0.1, 50), 3)})
    rpath = write_jsonl(tmp_path / "run.jsonl", run)
    ours = summarize(load_queries(DEV_QUERIES), read_run(rpath))
    assert_same(ours, score_py(rpath, DEV_QUERIES, tmp_path))
    assert 0 < ours["ALL"]["mrr10"] < 1


def test_ndcg_credits_each_target_once() -> None:
    gold = [g("b.py", 3), g("c.py", 4)]
    # File level: b, b (duplicate earns nothing), x, c.
    got = ndcg("references", [g("b.py", 3), g("b.py", 9), g("x.py", 1), g("c.py", 4)], gold)
    assert got == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    # Line level: the same span twice credits one gold entry once.
    assert ndcg("definition", [g("a.py", 10), g("a.py", 11)], [g("a.py", 10)]) == 1.0
    assert ndcg("definition", [g("z.py", 1), g("a.py", 10)], [g("a.py", 10)]) == pytest.approx(
        1 / math.log2(3)
    )
    assert ndcg("definition", [], [g("a.py", 10)]) == 0.0
    # More gold files than K: the ideal is K hits, so 10 right files in a row score 1.
    many = [g(f"m{i}.py", 1) for i in range(12)]
    assert ndcg("impact", many[:10], many) == pytest.approx(1.0)
