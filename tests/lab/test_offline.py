"""The offline re-scorer (codesearch_lab/offline.py) replays the server's routing, including the adaptive vector
cancel."""

from __future__ import annotations

import json
from pathlib import Path

from codesearch.eval.polyglot import read_run
from codesearch.v1 import common_pb2
from codesearch_lab.offline import QueryLegs, Variant, rank_one, run_file_name, write_runs


def hit(path: str, snippet: str) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=1, end_line=9)
    return common_pb2.Hit(location=loc, snippet=snippet, score=1.0)


def legs(query: str, keyword_snippet: str) -> QueryLegs:
    keyword = [hit("quoted.py", keyword_snippet), hit("other.py", "nothing here")]
    vector = [hit(f"near{i}.py", "x") for i in range(5)]
    return QueryLegs("q", query, keyword, vector, [], [])


def test_a_keyword_answer_quoting_the_question_cancels_the_vector_leg() -> None:
    routed = Variant("routed", routed=True, k=40.0)
    query = "close every idle pooled connection"
    quoted = rank_one(legs(query, "def close_idle(self):\n    # close every idle pooled connection"), routed)
    assert {f.hit.location.path for f in quoted} == {
        "quoted.py",
        "other.py",
    }  # the server gives vectors weight 0
    paraphrased = rank_one(legs(query, "def shutdown(self): ..."), routed)
    assert any(f.hit.location.path.startswith("near") for f in paraphrased)  # here the vector leg has its say


def test_a_name_is_replayed_with_the_centrality_boost() -> None:
    routed = Variant("routed", routed=True, k=40.0)
    first, hub = hit("a.py", "class Thing: ..."), hit("b.py", "class Thing: ...")
    plain = QueryLegs("q", "Thing", [first, hub], [], [], [])
    assert rank_one(plain, routed)[0].hit.location.path == "a.py"
    central = QueryLegs("q", "Thing", [first, hub], [], [], [], centrality={("b.py", 1, 9): 50.0})
    assert rank_one(central, routed)[0].hit.location.path == "b.py"  # the hub rises, as search.py ranks it


def test_each_variant_is_written_as_a_run_file_the_scorer_reads(tmp_path: Path) -> None:
    routed = Variant("routed", routed=True, k=40.0)
    ablation = Variant("-vector", weights={"keyword": 1.0}, params=None)
    qs = [legs("close every idle pooled connection", "def shutdown(self): ...")]
    write_runs(tmp_path, qs, [routed, ablation])
    assert run_file_name("-vector") == "run-no-vector.jsonl"  # not read as an option by --paired
    written = {p.name: read_run(p) for p in tmp_path.iterdir()}
    assert set(written) == {"run-routed.jsonl", "run-no-vector.jsonl"}
    assert [r["path"] for r in written["run-routed.jsonl"]["q"]["results"]] == [
        f.hit.location.path for f in rank_one(qs[0], routed)[:10]
    ]
    assert all(not r["path"].startswith("near") for r in written["run-no-vector.jsonl"]["q"]["results"])
    assert json.loads((tmp_path / "run-routed.jsonl").read_text().splitlines()[0])["query_id"] == "q"
