"""The per-language table of a polyglot run: a language x category grid per run, and two runs side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from codesearch.eval.polyglot import PolyglotSet, load_set, summarize
from codesearch.eval.polyglot_languages import compare_languages, format_languages, main
from codesearch.eval.polyglot_report import format_report, make_summary

REPOS = ("bats-core", "zig-clap", "chi")  # bash, zig and go: small, and chi has symbol queries


@pytest.fixture
def pset(shared_eval: Path) -> PolyglotSet:
    folder = shared_eval / "polyglot"
    if not (folder / "repos.json").is_file():
        pytest.skip(f"{folder} is not present")
    return load_set(folder).for_repos(REPOS)


def _run(pset: PolyglotSet, perfect: set[str]) -> dict[str, dict[str, Any]]:
    """Every query of a repository in `perfect` answered with its labelled files, the others with nothing."""
    return {
        q.qid: {"results": [{"path": t.path} for t in q.targets] if q.repo in perfect else []}
        for q in pset.queries
    }


def test_the_comparison_shows_each_language_and_category(pset: PolyglotSet) -> None:
    before = summarize(pset, _run(pset, {"chi"}))
    after = summarize(pset, _run(pset, {"chi", "zig-clap"}))
    lines = compare_languages(before, after).splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:]}
    assert set(rows) == {"bash", "go", "zig"}
    assert rows["zig"][:3] == ["0.000", "1.000", "+1.000"]  # ALL: before, after, delta
    assert rows["go"][:3] == ["1.000", "1.000", "+0.000"]
    assert rows["go"][-3:] == ["1.000", "1.000", "+0.000"]  # chi's symbol queries
    assert rows["zig"][-3:] == ["-", "-", "-"]  # zig-clap has no symbol query
    only = compare_languages(before, after, ["zig"]).splitlines()
    assert [line.split()[0] for line in only[3:]] == ["zig"]


def test_the_polyglot_report_carries_the_grid(pset: PolyglotSet) -> None:
    runs = {"auto": {"summary": summarize(pset, _run(pset, {"bats-core"}))}}
    grid = format_languages(runs)
    assert grid.startswith("NDCG@10 per language and category, auto")
    bash = next(line for line in grid.splitlines() if line.startswith("bash"))
    assert bash.split()[1] == "1.000"
    assert grid in format_report(runs, pset)


def test_the_command_compares_two_summaries_and_refuses_a_missing_run(
    pset: PolyglotSet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for name, perfect in (("before", set()), ("after", {"bats-core"})):
        summary = make_summary(pset, {"auto": {"summary": summarize(pset, _run(pset, perfect))}})
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(summary))
        paths.append(str(path))
    assert main(paths) == 0
    bash = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("bash"))
    assert bash.split()[1:4] == ["0.000", "1.000", "+1.000"]
    assert main([*paths, "--run", "semantic"]) == 2
    assert "has no run 'semantic'" in capsys.readouterr().err
