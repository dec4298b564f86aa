"""Grouped cross-validation, bootstrap intervals and paired differences, on sets whose answers are known."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.eval import crossval
from codesearch.eval.polyglot import load_set, merge_sets, repo_scores
from codesearch.eval.polyglot_latency import latency


def test_folds_split_repositories_and_span_languages() -> None:
    langs = {f"{lang}{i}": lang for lang in ("go", "py", "rs") for i in range(5)}
    fold_list = crossval.folds(langs, k=5, seed=3)
    assert sorted(r for f in fold_list for r in f) == sorted(langs)  # each repository in exactly one fold
    for f in fold_list:
        assert len(f) == 3
        assert {langs[r] for r in f} == {"go", "py", "rs"}  # five of each language: one per fold
    assert crossval.folds(langs, k=5, seed=3) == fold_list  # seeded: the same folds twice
    with pytest.raises(ValueError, match="cannot fill"):
        crossval.folds({"a": "go"}, k=2)


def test_bootstrap_interval_holds_the_mean_and_narrows_with_more_repositories() -> None:
    assert crossval.bootstrap([]) is None
    one = crossval.bootstrap([0.7])
    assert one == crossval.Interval(0.7, 0.7, 0.7, 1)
    same = crossval.bootstrap([0.5] * 10)
    assert same is not None and same.low == same.high == pytest.approx(0.5)
    few = crossval.bootstrap([0.0, 1.0] * 5)
    many = crossval.bootstrap([0.0, 1.0] * 50)
    assert few is not None and many is not None
    assert few.low < 0.5 < few.high and few.mean == pytest.approx(0.5)
    assert (many.high - many.low) < (few.high - few.low)
    # a mean of 0/1 values over 100 repositories: the normal interval is ±1.96 * 0.05
    assert many.low == pytest.approx(0.40, abs=0.03) and many.high == pytest.approx(0.60, abs=0.03)


def test_paired_difference_sees_a_small_consistent_gain_that_separate_intervals_hide() -> None:
    base = {f"r{i}": {"ALL": i / 20, "symbol": 0.5} for i in range(20)}  # repositories differ a lot
    better = {r: {"ALL": v["ALL"] + 0.02, "symbol": 0.5} for r, v in base.items()}  # +0.02 on every one
    a, b = crossval.summarise(base)["ALL"], crossval.summarise(better)["ALL"]
    assert a.high > b.low  # unpaired, the two intervals overlap
    diff = crossval.paired(base, better)
    assert diff["ALL"].mean == pytest.approx(0.02)
    assert crossval.verdict(diff["ALL"]) == "gain"
    assert crossval.verdict(diff["symbol"]) == "within"
    worse = {
        r: {"ALL": v["ALL"] - 0.1 * (i % 2 == 0), "symbol": 0.5} for i, (r, v) in enumerate(base.items())
    }
    assert crossval.verdict(crossval.paired(base, worse)["ALL"]) == "loss"


def test_choice_inside_folds_never_scores_a_fold_with_a_candidate_picked_on_it() -> None:
    # Candidate "lucky" is best only on repository r0; "steady" is better everywhere else.
    repos = {f"r{i}": "go" for i in range(6)}
    steady = {r: {"ALL": 0.6} for r in repos}
    lucky = {r: {"ALL": 0.5} for r in repos} | {"r0": {"ALL": 10.0}}
    fold_list = crossval.folds(repos, k=3)
    choice = crossval.choose({"lucky": lucky, "steady": steady}, fold_list)
    fold_of_r0 = next(i for i, f in enumerate(fold_list) if "r0" in f)
    assert choice.picks[fold_of_r0] == "steady"  # without r0 the lucky candidate loses
    assert all(p == "lucky" for i, p in enumerate(choice.picks) if i != fold_of_r0)
    assert choice.held_out["r0"]["ALL"] == 0.6
    assert set(choice.held_out) == set(repos)


def _write_set(folder: Path, repos: dict[str, str], final: Sequence[str] = ()) -> None:
    """A set in the polyglot format: each repository has one file `a.py` and two questions targeting it."""
    (folder / "annotations").mkdir(parents=True)
    for name in repos:
        (folder / "repos" / name).mkdir(parents=True)
        (folder / "repos" / name / "a.py").write_text("x = 1\n")
        qs = [
            {"query": "Thing", "category": "symbol", "relevant": ["a.py"], "secondary": []},
            {
                "query": "where is the thing made",
                "category": "semantic",
                "relevant": ["a.py"],
                "secondary": [],
            },
        ]
        (folder / "annotations" / f"{name}.json").write_text(json.dumps(qs))
    (folder / "repos.json").write_text(
        json.dumps([{"name": n, "language": lang} for n, lang in repos.items()])
    )
    (folder / "manifest.json").write_text(
        json.dumps({"final_test": list(final), "repos": [{"name": n} for n in repos]})
    )


def _run_file(path: Path, hits: dict[str, bool]) -> None:
    """Each repository's questions answered with `a.py` first (True) or with a wrong file only (False)."""
    with open(path, "w") as fh:
        for repo, right in hits.items():
            for i in range(2):
                res = [{"path": "a.py" if right else "b.py", "start_line": 1, "end_line": 1}]
                fh.write(json.dumps({"query_id": f"{repo}:{i}", "repo": repo, "results": res}) + "\n")


def test_eval_prints_cross_validation_paired_compare_and_keeps_the_final_test_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _write_set(one, {"p1": "python", "p2": "python", "g1": "go"})
    _write_set(two, {"g2": "go", "r1": "rust", "r2": "rust", "fin": "rust"}, final=["fin"])
    (two / "annotations" / "r2.json").write_text('[{"category": "symbol"}]')  # malformed: left out, named
    dev = ["p1", "p2", "g1", "g2", "r1"]
    _run_file(tmp_path / "before.jsonl", {r: r in ("p1", "g1") for r in [*dev, "fin"]})
    _run_file(tmp_path / "after.jsonl", {r: True for r in [*dev, "fin"]})
    args = ["--polyglot", str(one), "--polyglot", str(two), "--folds", "2", "--out", str(tmp_path / "out")]
    args += ["--score", str(tmp_path / "before.jsonl"), str(tmp_path / "after.jsonl")]
    assert eval_main([*args, "--paired", "before", "after", "--choose", "before,after"]) == 0
    out, err = capsys.readouterr()
    assert "r2.json entry 0: malformed question" in err
    assert (
        "grouped cross-validation: 5 repositories, 10 questions, 2 folds" in out
    )  # fin and r2 are not in it
    # before answers 2 of 5 repositories: 0.400; after all five: 1.000; the difference +0.600, a gain.
    all_row = next(line for line in out.splitlines() if line.startswith("ALL") and "[" in line)
    assert all_row.split()[1] == "0.400" and all_row.split()[4] == "1.000"
    assert "paired difference, after − before" in out
    paired_all = next(line for line in out.splitlines() if line.startswith("ALL") and "gain" in line)
    assert paired_all.split()[1] == "+0.600"
    assert "rule: a gain that may land" in out
    assert "chosen (best ALL on the other folds): fold 1: after, fold 2: after" in out
    assert eval_main([*args, "--final-test"]) == 0
    out, _ = capsys.readouterr()
    assert "1 repositories, 2 questions" in out and "FINAL TEST" in out
    assert eval_main([*args, "--paired", "before", "nope"]) == 2
    assert "no run named 'nope'" in capsys.readouterr().err


def test_repo_scores_and_merge(tmp_path: Path) -> None:
    _write_set(tmp_path / "a", {"x": "go"})
    _write_set(tmp_path / "b", {"x": "rust"})
    with pytest.raises(ValueError, match="in another set too"):
        merge_sets([load_set(tmp_path / "a"), load_set(tmp_path / "b")])
    pset = load_set(tmp_path / "a")
    run: dict[str, dict[str, Any]] = {"x:0": {"results": [{"path": "a.py"}]}, "x:1": {"results": []}}
    assert repo_scores(pset, run) == {"x": {"ALL": 0.5, "lang:go": 0.5, "symbol": 1.0, "semantic": 0.0}}


def test_latency_counts_a_set_whose_repositories_are_outside_the_fixed_split(tmp_path: Path) -> None:
    _write_set(tmp_path / "s", {"p1": "python", "g1": "go"})
    pset = load_set(tmp_path / "s")
    run = {q.qid: {"latency_ms": 5.0} for q in pset.queries}
    scopes = latency(pset, run)
    assert scopes["ALL"]["search"]["n"] == 4
    assert not any(s.startswith(("fit", "held-out")) for s in scopes)
