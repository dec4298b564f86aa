"""Grouped cross-validation by repository, bootstrap intervals over repositories, and paired differences.

The unit of evidence is the repository: questions of one repository share its code, so they are not independent
and a figure's uncertainty comes from which repositories were drawn. So:
- folds split repositories (never questions), balanced over languages: each fold gets a share of every language;
- an interval is a percentile bootstrap over repositories (resample repositories with replacement, take the
  macro mean), seeded so a report reads the same twice;
- a choice among configurations (a constant, a weight, a model) is made inside the folds: each fold's
  repositories are scored by the candidate that did best on the other folds (`choose`);
- two configurations are compared paired, repository by repository (`paired`), so the interval is that of the
  difference, not of each figure.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_FOLDS = 5  # the evaluation issue: K = 5 folds by repository
BOOTSTRAP_SAMPLES = 2000  # percentile intervals settle to ±0.002 at this count on 50 repositories
CONFIDENCE = 0.95
DEFAULT_SEED = 0
# Below this many repositories a bootstrap interval says nothing (one repository resamples to itself): the row
# shows its mean and count, and never reads as a gain or a loss.
MIN_REPOS_FOR_INTERVAL = 3

# One repository's figures: row ("ALL", a category, "lang:<language>") -> its mean NDCG@10 on that row.
RepoScores = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    repos: int

    def text(self, signed: bool = False) -> str:
        f = "{:+.3f}" if signed else "{:.3f}"
        if self.repos < MIN_REPOS_FOR_INTERVAL:
            return f"{f.format(self.mean)} ({self.repos} repo{'s' if self.repos > 1 else ''})"
        return f"{f.format(self.mean)} [{f.format(self.low)}, {f.format(self.high)}]"


def folds(
    repo_language: Mapping[str, str], k: int = DEFAULT_FOLDS, seed: int = DEFAULT_SEED
) -> list[list[str]]:
    """k groups of repositories; within each language its repositories are shuffled and dealt round the folds,
    continuing where the previous language stopped, so every fold spans the languages and sizes differ by ≤ 1."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, not {k}")
    if len(repo_language) < k:
        raise ValueError(f"{len(repo_language)} repositories cannot fill {k} folds")
    rng = random.Random(seed)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for repo, lang in sorted(repo_language.items()):
        by_lang[lang].append(repo)
    out: list[list[str]] = [[] for _ in range(k)]
    at = 0
    for lang in sorted(by_lang):
        repos = by_lang[lang]
        rng.shuffle(repos)
        for repo in repos:
            out[at % k].append(repo)
            at += 1
    return [sorted(f) for f in out]


def bootstrap(
    values: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = DEFAULT_SEED
) -> Interval | None:
    """The mean of per-repository values with its percentile bootstrap interval; None for no values."""
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    if n == 1:
        return Interval(mean, mean, mean, 1)
    rng = random.Random(seed)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    tail = (1 - CONFIDENCE) / 2
    lo = means[int(tail * (samples - 1))]
    hi = means[int((1 - tail) * (samples - 1))]
    return Interval(mean, lo, hi, n)


def rows_of(scores: RepoScores) -> list[str]:
    """Every row some repository has, ALL first, then categories, then languages."""
    names = {row for per in scores.values() for row in per}
    return sorted(names, key=lambda r: (r != "ALL", r.startswith("lang:"), r))


def summarise(scores: RepoScores, seed: int = DEFAULT_SEED) -> dict[str, Interval]:
    """Each row's mean over repositories that have it, with its interval."""
    out: dict[str, Interval] = {}
    for row in rows_of(scores):
        iv = bootstrap([per[row] for per in scores.values() if row in per], seed=seed)
        if iv:
            out[row] = iv
    return out


@dataclass(frozen=True)
class Choice:
    """A choice made inside the folds: per fold, the candidate best on the other folds, and the held-out figure."""

    picks: list[str]  # per fold
    held_out: dict[
        str, dict[str, float]
    ]  # repository -> row -> its score under the candidate chosen without it
    intervals: dict[str, Interval]


def choose(
    candidates: Mapping[str, RepoScores],
    fold_list: Sequence[Sequence[str]],
    row: str = "ALL",
    seed: int = DEFAULT_SEED,
) -> Choice:
    """Picks, for each fold, the candidate with the best macro `row` on the other folds (ties: the first given),
    and scores that fold's repositories with it: the figure a choice by this rule earns on unseen repositories."""
    if not candidates:
        raise ValueError("no candidates to choose among")
    picks: list[str] = []
    held: dict[str, dict[str, float]] = {}
    for i, fold in enumerate(fold_list):
        train = [r for j, f in enumerate(fold_list) if j != i for r in f]
        best, best_score = "", float("-inf")
        for name, scores in candidates.items():
            vals = [scores[r][row] for r in train if r in scores and row in scores[r]]
            score = sum(vals) / len(vals) if vals else float("-inf")
            if score > best_score:
                best, best_score = name, score
        picks.append(best)
        for r in fold:
            if r in candidates[best]:
                held[r] = dict(candidates[best][r])
    return Choice(picks, held, summarise(held, seed))


def paired(before: RepoScores, after: RepoScores, seed: int = DEFAULT_SEED) -> dict[str, Interval]:
    """after − before per row, repository by repository over the repositories both have, with its interval."""
    common = [r for r in before if r in after]
    out: dict[str, Interval] = {}
    for row in rows_of({r: before[r] for r in common}):
        diffs = [after[r][row] - before[r][row] for r in common if row in before[r] and row in after[r]]
        iv = bootstrap(diffs, seed=seed)
        if iv:
            out[row] = iv
    return out


def verdict(iv: Interval) -> str:
    """`gain` / `loss` when the interval excludes zero, else `within`; `few` below MIN_REPOS_FOR_INTERVAL."""
    if iv.repos < MIN_REPOS_FOR_INTERVAL:
        return "few"
    if iv.low > 0:
        return "gain"
    if iv.high < 0:
        return "loss"
    return "within"
