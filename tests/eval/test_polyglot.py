"""The polyglot format: our scoring equals ../shared/eval/polyglot/score.py on a real run through a real server."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.config import Settings
from codesearch.eval.polyglot import (
    FIT_REPOS,
    HELD_OUT_REPOS,
    PolyQuery,
    Target,
    load_set,
    score_query,
    summarize,
)
from codesearch.eval.report import load_summary
from codesearch.v1 import search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

server_mod = pytest.importorskip("codesearch.server")
pytest.importorskip("codesearch._native")

SERVICES = ("keyword", "graph", "orchestrator")
SMALL_REPO = "bats-core"  # 8 files, 20 queries: a full run in a few seconds


@pytest.fixture
def polyglot(shared_eval: Path) -> Path:
    folder = shared_eval / "polyglot"
    if not (folder / "score.py").is_file():
        pytest.skip(f"{folder} is not present")
    return folder


def _score_py(folder: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("polyglot_score", folder / "score.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["polyglot_score"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_split_is_disjoint_and_covers_the_set(polyglot: Path) -> None:
    pset = load_set(polyglot)
    assert not set(FIT_REPOS) & set(HELD_OUT_REPOS)
    assert set(FIT_REPOS) | set(HELD_OUT_REPOS) == set(pset.repos)
    assert len(pset.queries) == 417


def test_score_query_matches_score_py_on_edge_cases(polyglot: Path) -> None:
    ref = _score_py(polyglot)
    targets = (Target("src/a.py", 10, 20), Target("lib/b.go"), Target("c.rs", 5, 5))
    q = PolyQuery("r", "r:0", "q", "semantic", targets)
    rq = ref.Query("r", "r:0", "q", "semantic", tuple(ref.Target(t.path, t.start, t.end) for t in targets))
    cases: list[list[dict[str, Any]]] = [
        [],
        [
            {"path": "a.py", "start_line": 1, "end_line": 9},
            {"path": "a.py", "start_line": 15, "end_line": 30},
        ],
        [{"path": "x/lib/b.go", "start_line": 1, "end_line": 2}, {"path": "/abs/repos/r/c.rs"}],
        [{"path": "src/a.py", "start_line": 20, "end_line": 25}] * 3 + [{"path": "c.rs", "start_line": 5}],
        [{"path": f"f{i}.py", "start_line": 1, "end_line": 2} for i in range(12)] + [{"path": "lib/b.go"}],
    ]
    for results in cases:
        ours = score_query(q, results)
        theirs = ref.score_query(rq, results, polyglot, 10)
        assert ours["ranks"] == theirs["ranks"]
        for ours_key, their_key in (("ndcg10", "ndcg"), ("hit1", "hit1"), ("recall10", "recall10")):
            assert ours[ours_key] == pytest.approx(theirs[their_key])


def test_eval_polyglot_through_real_server_equals_score_py(
    polyglot: Path, tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(server_mod.registrars(settings, SERVICES))
    out = tmp_path / "out"
    args = ["--polyglot", str(polyglot), "--only-repo", SMALL_REPO, "--address", server.address]
    args += ["--modes", "auto,keyword", "--out", str(out), "--dump-legs", "--plot", str(tmp_path / "plots")]
    assert eval_main(args) == 0
    printed = capsys.readouterr().out
    assert "NDCG@10, all repositories" in printed and "semble(pub)" in printed
    # The server really indexed the repository and answered every query.
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    names = [r.name for r in stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories]
    assert names == [SMALL_REPO]
    runs = load_summary(out / "summary.json")
    for mode in ("auto", "keyword"):
        ref_json = tmp_path / f"{mode}.json"
        subprocess.run(
            [
                sys.executable,
                str(polyglot / "score.py"),
                "score",
                str(out / f"run-{mode}.jsonl"),
                "--holdout",
                str(polyglot),
                "--repo",
                SMALL_REPO,
                "--json",
                str(ref_json),
                "--quiet",
            ],
            check=True,
        )
        ref = json.loads(ref_json.read_text())
        rows = runs[mode]["summary"]
        assert ref["micro"]["overall"]["n"] == rows["ALL"]["n"] == 20
        assert not ref["missing_queries"]
        for ours, theirs in (
            ("ALL", "overall"),
            ("architecture", "architecture"),
            ("semantic", "semantic"),
            ("symbol", "symbol"),
        ):
            if theirs not in ref["macro"]:
                continue
            for m_ours, m_ref in (("ndcg10", "ndcg"), ("hit1", "hit1"), ("recall10", "recall10")):
                assert rows[ours][m_ours] == pytest.approx(ref["macro"][theirs][m_ref]), (mode, ours, m_ours)
        assert rows[f"repo:{SMALL_REPO}"]["ndcg10"] == pytest.approx(ref["repos"][SMALL_REPO]["ndcg"])
        assert rows["ALL"]["ndcg10"] > 0.2  # BM25 alone finds something on this repository
    assert "calibration" in runs["auto"] and runs["auto"]["calibration"]["ALL"]["n"] == 20
    legs = [json.loads(line) for line in (out / "legs.jsonl").read_text().splitlines()]
    assert len(legs) == 20 and all(rec["legs"]["keyword"] for rec in legs)
    assert (tmp_path / "plots" / "category-symbol.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_reads_polyglot_summaries(
    polyglot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pset = load_set(polyglot).for_repos([SMALL_REPO])
    perfect = {
        q.qid: {"results": [{"path": t.path, "start_line": t.start, "end_line": t.end} for t in q.targets]}
        for q in pset.queries
    }
    a = {"runs": {"auto": {"summary": summarize(pset, perfect)}}}
    b = {"runs": {"auto": {"summary": summarize(pset, {})}}}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert a["runs"]["auto"]["summary"]["ALL"]["ndcg10"] == pytest.approx(1.0)
    assert eval_main(["--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    assert "WORSE" in capsys.readouterr().out


def test_polyglot_bad_folder_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["--polyglot", str(tmp_path), "--score", str(tmp_path / "x.jsonl")]) == 2
    assert "not a polyglot set" in capsys.readouterr().err


def test_waiting_for_embeddings_does_not_read_a_silent_vector_leg_as_done(
    tmp_path: Path, start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A vector leg that cannot answer GetStatus leaves every repository's pending count at 0 in the reply;
    # the server marks it unknown and the wait must not take it for "complete" (it did once, and a MiniLM run
    # then measured the static tier).
    import socket

    from codesearch.eval import polyglot_run

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        silent = f"127.0.0.1:{s.getsockname()[1]}"
    settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_VECTOR_ADDR": silent}
    )
    server = start_server(server_mod.registrars(settings, SERVICES))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text("def parse_config(path):\n    return open(path).read()\n")
    for _ in stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(src), name="tiny")):
        pass  # keyword and graph commit; the vector leg's part is reported degraded
    listed = stub.ListRepositories(search_pb2.ListRepositoriesRequest()).repositories
    status = stub.GetStatus(search_pb2.GetStatusRequest()).repositories
    assert [(r.name, r.embeddings_unknown) for r in listed] == [("tiny", True)]
    assert [(r.name, r.embeddings_unknown) for r in status] == [("tiny", True)]
    monkeypatch.setattr(polyglot_run, "VECTOR_SILENT_S", 0.5)
    monkeypatch.setattr(polyglot_run, "POLL_S", 0.1)
    with pytest.raises(polyglot_run.IndexFailed, match="vector leg has not answered"):
        polyglot_run.wait_for_embeddings(stub, ["tiny"], lambda _line: None)


def test_confidence_is_reported_per_category_within_each_half(polyglot: Path) -> None:
    from codesearch.eval.polyglot_report import calibration, format_calibration

    fit_repo, held_repo = FIT_REPOS[0], HELD_OUT_REPOS[0]
    pset = load_set(polyglot).for_repos([fit_repo, held_repo])
    run = {}
    for i, q in enumerate(pset.queries):
        right = i % 2 == 0  # every other query right, and only those confident
        results = (
            [{"path": t.path, "start_line": t.start, "end_line": t.end} for t in q.targets] if right else []
        )
        run[q.qid] = {"results": results, "confidence": 0.97 if right else 0.2}
    cal = calibration(pset, run)
    assert cal is not None
    assert cal["split:held-out"]["auroc"] == 1.0
    held = [q for q in pset.queries if q.repo == held_repo]
    for c in {q.category for q in held}:
        assert cal[f"split:held-out/{c}"]["n"] == sum(1 for q in held if q.category == c)
    in_bins = {b["from"]: b for b in cal["bins_held_out"]}
    assert in_bins[0.95]["n"] + in_bins[0.0]["n"] == len(held)
    assert in_bins[0.95]["hit1"] == 1.0 and in_bins[0.0]["hit1"] == 0.0
    text = format_calibration("auto", cal)
    assert "split:held-out/semantic" in text and "hit@1 per confidence bin, held-out:" in text


def test_scored_runs_of_two_builds_are_named_by_their_folders(tmp_path: Path) -> None:
    from codesearch.cli.eval_polyglot import score_run_names

    before, after = tmp_path / "before" / "run-auto.jsonl", tmp_path / "after" / "run-auto.jsonl"
    assert score_run_names([before, after]) == ["before", "after"]  # README: --paired before after
    assert score_run_names([before, tmp_path / "x" / "run-keyword.jsonl"]) == ["auto", "keyword"]
    with pytest.raises(ValueError, match="both be named 'before'"):
        score_run_names([before, tmp_path / "before" / "sub" / ".." / "run-auto.jsonl"])
