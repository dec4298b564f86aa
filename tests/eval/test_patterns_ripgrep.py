"""Patterns derived from queries; the ripgrep baseline over a tiny directory; variant parsing."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.eval.harness import Variant, parse_variants, request_for
from codesearch.eval.patterns import derive, literal_pattern, query_words, regex_pattern
from codesearch.eval.runfile import Query
from codesearch.v1 import search_pb2


def test_derive_patterns() -> None:
    assert literal_pattern('"Executor shutdown has been called"') == "Executor shutdown has been called"
    assert literal_pattern("where is bisect_right defined") == "bisect_right"
    assert literal_pattern("who calls literal_eval") == "literal_eval"
    assert literal_pattern("usages of athrow") == "athrow"
    assert literal_pattern("what depends on module email.utils") == "email.utils"
    assert literal_pattern("what breaks if I change _osx_support") == "_osx_support"
    assert derive("BooleanOptionalAction").kind == "identifier"
    assert derive("Exponent of a 0 changed to fit bounds.").kind == "text"
    assert regex_pattern('"bad value (x)"') == re.escape("bad value (x)")
    assert re.search(regex_pattern("what depends on module a.b"), "import a.b") is not None
    assert query_words("Return the number of items in the deque.") == ["return", "number", "items", "deque"]


def test_parse_variants() -> None:
    assert [v.name for v in parse_variants("keyword,auto+rerank,auto-rerank")] == [
        "keyword",
        "auto+rerank",
        "auto-rerank",
    ]
    assert [v.name for v in parse_variants("auto,keyword", "on,off")] == [
        "auto+rerank",
        "auto-rerank",
        "keyword+rerank",
        "keyword-rerank",
    ]
    with pytest.raises(ValueError):
        parse_variants("fuzzy")
    with pytest.raises(ValueError):
        parse_variants("auto", "sometimes")
    q = Query("x", "exact_match", "quoted", '"a.b failed"', [])
    req = request_for(q, Variant("regex", "on"), "repo", 10)
    assert req.query == re.escape("a.b failed") and req.mode == search_pb2.SEARCH_MODE_REGEX
    assert req.rerank == search_pb2.RERANK_POLICY_ON and req.no_cache and list(req.repositories) == ["repo"]
    assert request_for(q, Variant("keyword"), "repo", 10).query == '"a.b failed"'


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep not installed")
def test_ripgrep_baseline(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(
        "def parse_thing(x):\n    raise ValueError('cannot parse the thing')\n"
    )
    (root / "b.py").write_text("from pkg.a import parse_thing\n\nparse_thing(1)\nparse_thing(2)\n")
    queries = [
        {
            "id": "d",
            "klass": "definition",
            "variant": "phrased",
            "query": "where is parse_thing defined",
            "gold": [{"path": "pkg/a.py", "line": 1, "end_line": 1}],
        },
        {
            "id": "e",
            "klass": "exact_match",
            "variant": "quoted",
            "query": '"cannot parse the thing"',
            "gold": [{"path": "pkg/a.py", "line": 2, "end_line": 2}],
        },
        {
            "id": "c",
            "klass": "concept",
            "variant": "literal",
            "query": "Nothing in here matches zzqx.",
            "gold": [{"path": "pkg/a.py", "line": 1, "end_line": 2}],
        },
    ]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in queries))
    out = tmp_path / "out"
    assert eval_main([str(qfile), "--baseline", "ripgrep", "--root", str(root), "--out", str(out)]) == 0
    run = {r["id"]: r for r in map(json.loads, (out / "run-ripgrep.jsonl").read_text().splitlines())}
    # --sort path: b.py's lines first, then pkg/a.py; every matching line is a result.
    assert [(r["path"], r["line"]) for r in run["d"]["results"]] == [
        ("b.py", 1),
        ("b.py", 3),
        ("b.py", 4),
        ("pkg/a.py", 1),
    ]
    assert [(r["path"], r["line"]) for r in run["e"]["results"]] == [("pkg/a.py", 2)]
    # Sentence: words OR'ed ("nothing", "here", "matches", "zzqx"): no line has any of them.
    assert run["c"]["results"] == []
    s = json.loads((out / "summary.json").read_text())["runs"]["ripgrep"]["summary"]
    assert (
        s["definition"]["mrr10"] == 0.25 and s["exact_match"]["hit1"] == 1.0 and s["concept"]["zero"] == 1.0
    )


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    assert eval_main([]) == 2
    assert eval_main([str(tmp_path / "missing.jsonl"), "--repo", "r"]) == 2
    assert eval_main(["--mine", str(tmp_path / "nowhere"), "--out", str(tmp_path / "q.jsonl")]) == 2
