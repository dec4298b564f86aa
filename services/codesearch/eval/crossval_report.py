"""Text tables of the grouped cross-validation: per run, a paired difference, and a choice made inside the folds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codesearch.eval import crossval
from codesearch.eval.polyglot import PolyglotSet, repo_scores

ROW_WIDTH = 22
CELL_WIDTH = 24


def _fold_list(pset: PolyglotSet, k: int, seed: int) -> list[list[str]]:
    return crossval.folds({r: s.language for r, s in pset.repos.items()}, k, seed)


def _header(pset: PolyglotSet, k: int, seed: int, what: str) -> str:
    final = bool(pset.final_test) and set(pset.repos) <= pset.final_test
    how = (
        "FINAL TEST, no folds (nothing is fitted on it; read once per claimed gain)"
        if final
        else (f"{k} folds by repository (seed {seed})")
    )
    return (
        f"{what}: {len(pset.repos)} repositories, {len(pset.queries)} questions, {how}; NDCG@10 macro over "
        f"repositories [{crossval.CONFIDENCE:.0%} bootstrap interval over repositories, "
        f"{crossval.BOOTSTRAP_SAMPLES} samples]"
    )


def _table(columns: Mapping[str, Mapping[str, crossval.Interval]], signed: bool = False) -> list[str]:
    rows = crossval.rows_of({name: {row: 0.0 for row in col} for name, col in columns.items()})
    lines = [
        "row".ljust(ROW_WIDTH) + "".join(n[: CELL_WIDTH - 1].ljust(CELL_WIDTH) for n in columns) + "repos"
    ]
    for row in rows:
        cells = []
        repos = 0
        for col in columns.values():
            iv = col.get(row)
            cells.append((iv.text(signed) if iv else "-").ljust(CELL_WIDTH))
            repos = max(repos, iv.repos if iv else 0)
        lines.append(row[: ROW_WIDTH - 1].ljust(ROW_WIDTH) + "".join(cells) + str(repos))
    return lines


def format_runs(
    pset: PolyglotSet, runs: Mapping[str, Mapping[str, Mapping[str, Any]]], k: int, seed: int
) -> str:
    """Each run's held-out figure per row (ALL, category, language). A fixed configuration fits nothing, so
    each repository's held-out score is its own score; the folds matter once something is chosen (format_choice)."""
    cols = {name: crossval.summarise(repo_scores(pset, records), seed) for name, records in runs.items()}
    return "\n".join([_header(pset, k, seed, "grouped cross-validation"), *_table(cols)])


def format_paired(
    pset: PolyglotSet,
    before: tuple[str, Mapping[str, Mapping[str, Any]]],
    after: tuple[str, Mapping[str, Mapping[str, Any]]],
    k: int,
    seed: int,
) -> tuple[str, bool]:
    """after − before per row with its interval and verdict; also whether the change may land by the rule
    (ALL's interval above zero and no category's below zero)."""
    diff = crossval.paired(repo_scores(pset, before[1]), repo_scores(pset, after[1]), seed)
    lines = [
        _header(pset, k, seed, f"paired difference, {after[0]} − {before[0]}"),
        "row".ljust(ROW_WIDTH) + "difference [interval]".ljust(CELL_WIDTH) + "verdict  repos",
    ]
    for row, iv in diff.items():
        lines.append(
            row[: ROW_WIDTH - 1].ljust(ROW_WIDTH) + iv.text(True).ljust(CELL_WIDTH)
            + crossval.verdict(iv).ljust(9) + str(iv.repos)
        )  # fmt: skip
    categories = [r for r in diff if r != "ALL" and not r.startswith("lang:")]
    lands = "ALL" in diff and crossval.verdict(diff["ALL"]) == "gain"
    lands = lands and all(crossval.verdict(diff[c]) != "loss" for c in categories)
    loses_nothing = all(crossval.verdict(diff[c]) != "loss" for c in ["ALL", *categories] if c in diff)
    lines.append(
        f"rule: {'a gain that may land' if lands else 'not a gain'} (ALL above zero, no category below); "
        f"{'loses nothing outside the interval' if loses_nothing else 'loses outside the interval'} "
        "(enough for a change that deletes code or a constant)"
    )
    return "\n".join(lines), lands


def format_choice(
    pset: PolyglotSet, candidates: Mapping[str, Mapping[str, Mapping[str, Any]]], k: int, seed: int
) -> str:
    """A choice among candidate runs made inside the folds: each fold scored by the candidate that was best on
    the other folds. The figure is what choosing by this rule earns on repositories it did not see."""
    fold_list = _fold_list(pset, k, seed)
    scores = {name: repo_scores(pset, records) for name, records in candidates.items()}
    choice = crossval.choose(scores, fold_list, seed=seed)
    picks = ", ".join(f"fold {i + 1}: {p}" for i, p in enumerate(choice.picks))
    lines = [
        _header(pset, k, seed, f"choice among {', '.join(candidates)}, made inside the folds"),
        f"chosen (best ALL on the other folds): {picks}",
        *_table({"chosen inside folds": choice.intervals}),
    ]
    return "\n".join(lines)


def fold_lines(pset: PolyglotSet, k: int, seed: int) -> Sequence[str]:
    return [f"fold {i + 1}: {', '.join(f)}" for i, f in enumerate(_fold_list(pset, k, seed))]
