"""Comparing two summaries flags the class that got worse; the plot is a PNG; score.py JSON is accepted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.eval.compare import DEFAULT_TOLERANCE, find_regressions, format_comparison
from codesearch.eval.plot import plot_mrr
from codesearch.eval.report import load_summary

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rows(mrr: dict[str, float]) -> dict[str, Any]:
    return {
        k: {
            "n": 10,
            "hit1": v,
            "hit10": v,
            "mrr10": v,
            "recall10": None,
            "recall10cap": None,
            "ndcg10": v,
            "zero": 0.0,
            "lat_p50_ms": 1.0,
            "lat_p95_ms": 2.0,
            "missing": 0,
            "invalid": 0,
            "errors": 0,
        }
        for k, v in mrr.items()
    }


BASE = {
    "runs": {
        "keyword": {"summary": rows({"definition": 0.6, "concept": 0.9, "impact": 0.5, "ALL": 0.7})},
        "literal": {"summary": rows({"definition": 0.7, "concept": 0.1, "impact": 0.4, "ALL": 0.4})},
    }
}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_compare_flags_worse_class_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    after = copy.deepcopy(BASE)
    after["runs"]["keyword"]["summary"]["concept"]["mrr10"] = 0.8  # worse by 0.1
    after["runs"]["keyword"]["summary"]["definition"]["mrr10"] = (
        0.6 - DEFAULT_TOLERANCE / 2
    )  # within tolerance
    after["runs"]["literal"]["summary"]["impact"]["mrr10"] = 0.6  # better
    a, b = load_summary(write(tmp_path / "a.json", BASE)), load_summary(write(tmp_path / "b.json", after))
    regs = find_regressions(a, b)
    assert [(r.run, r.row, r.metric) for r in regs] == [("keyword", "concept", "mrr10")]
    text = format_comparison(a, b)
    concept_line = next(line for line in text.splitlines() if line.startswith("concept") and "-0.100" in line)
    assert concept_line.endswith("WORSE")
    assert sum(line.endswith("WORSE") for line in text.splitlines()) == 1
    # The CLI exits 1 when something got worse, 0 when not.
    assert eval_main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert eval_main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 0
    assert "WORSE" in capsys.readouterr().out


def test_compare_reads_score_py_json(tmp_path: Path) -> None:
    a = {"run": "run-a.jsonl", "k": 10, "summary": rows({"definition": 0.5, "ALL": 0.5})}
    b = {"run": "run-b.jsonl", "k": 10, "summary": rows({"definition": 0.3, "ALL": 0.3})}
    sa, sb = load_summary(write(tmp_path / "a.json", a)), load_summary(write(tmp_path / "b.json", b))
    regs = find_regressions(sa, sb)
    assert {(r.row, r.metric) for r in regs} >= {("definition", "mrr10"), ("ALL", "mrr10")}
    assert "run-a.jsonl -> run-b.jsonl" in format_comparison(sa, sb)


def test_plot_writes_png(tmp_path: Path) -> None:
    out = plot_mrr(BASE["runs"], tmp_path / "sub" / "mrr.png")
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 2000
