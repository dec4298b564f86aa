"""The polyglot development set (../shared/eval/polyglot): queries, targets, scoring and aggregates.

Scoring reproduces ../shared/eval/polyglot/score.py (semble's benchmark rules; tests/eval/test_polyglot.py checks
equality on a real run): a query's targets are `relevant + secondary`, each gain 1; a result matches a span target
when the line ranges overlap and a file-level target on path alone; paths match when equal or one ends with
"/" + the other. NDCG@10 with binary gains and an ideal of min(10, targets); hit@1; recall@10. Aggregates are
macro: the mean over repositories of each repository's mean (per category: over repositories that have it).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = ("architecture", "semantic", "symbol")
METRICS = ("ndcg10", "hit1", "recall10")
K = 10

# The fixed split by repository: constants and models are fitted on FIT_REPOS only and reported on HELD_OUT.
# Chosen by hand once (before any tuning) so each half spans scripting, systems, JVM and functional languages:
# within each family one repository goes to each half.
FIT_REPOS = (
    "fastapi",
    "redux",
    "cobra",
    "rack",
    "newtonsoft-json",
    "cats",
    "plug",
    "aeson",
    "bats-core",
    "laravel-framework",
)
HELD_OUT_REPOS = (
    "click",
    "trpc",
    "chi",
    "commons-lang",
    "serde",
    "ktor",
    "alamofire",
    "lazy.nvim",
    "zig-clap",
    "curl",
    "abseil-cpp",
)
SPLITS = {"fit": FIT_REPOS, "held-out": HELD_OUT_REPOS}

# semble's published NDCG@10 on these repositories (its results files, as ../shared/eval/polyglot/README.md).
SEMBLE_PUBLISHED_REPO = {
    "fastapi": 0.787,
    "click": 1.000,
    "redux": 0.914,
    "trpc": 0.811,
    "cobra": 0.959,
    "chi": 0.867,
    "commons-lang": 0.896,
    "rack": 0.893,
    "serde": 0.815,
    "newtonsoft-json": 0.891,
    "ktor": 0.843,
    "cats": 0.911,
    "alamofire": 0.964,
    "plug": 0.901,
    "lazy.nvim": 0.682,
    "aeson": 0.762,
    "zig-clap": 0.910,
    "bats-core": 0.841,
    "curl": 0.726,
    "laravel-framework": 0.741,
    "abseil-cpp": 0.949,
}
SEMBLE_PUBLISHED_ALL = {"ALL": 0.860, "architecture": 0.829, "semantic": 0.842, "symbol": 0.961}


@dataclass(frozen=True)
class Target:
    path: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class PolyQuery:
    """One labelled question; a system under test may read only `qid`, `repo` and `text`."""

    repo: str
    qid: str
    text: str
    category: str
    targets: tuple[Target, ...]


@dataclass(frozen=True)
class RepoSpec:
    name: str
    language: str
    root: Path  # the folder to index: repos/<name>/<benchmark_root>
    benchmark_root: str | None


@dataclass(frozen=True)
class PolyglotSet:
    folder: Path
    repos: dict[str, RepoSpec]
    queries: list[PolyQuery]
    # Repositories kept as a final test (manifest.json "final_test"): no fit and no choice reads them.
    final_test: frozenset[str] = frozenset()
    # Every folder the set was read from (several sets evaluate as one).
    folders: tuple[Path, ...] = ()
    # Entries that could not be read: "<file>: <reason>", each leaving its repository out.
    problems: tuple[str, ...] = ()

    def for_repos(self, names: Iterable[str]) -> PolyglotSet:
        keep = set(names)
        return PolyglotSet(
            self.folder,
            {n: s for n, s in self.repos.items() if n in keep},
            [q for q in self.queries if q.repo in keep],
            self.final_test & keep,
            self.folders,
            self.problems,
        )

    def development(self) -> PolyglotSet:
        """The set without its final-test repositories: what every fit, choice and cross-validation reads."""
        return self.for_repos(n for n in self.repos if n not in self.final_test)


def merge_sets(sets: Sequence[PolyglotSet]) -> PolyglotSet:
    """Several sets as one; ValueError when two hold a repository of the same name."""
    repos: dict[str, RepoSpec] = {}
    for pset in sets:
        clash = sorted(set(repos) & set(pset.repos))
        if clash:
            raise ValueError(f"{pset.folder}: repositories {clash} are in another set too")
        repos.update(pset.repos)
    return PolyglotSet(
        sets[0].folder,
        repos,
        [q for pset in sets for q in pset.queries],
        frozenset().union(*(pset.final_test for pset in sets)),
        tuple(f for pset in sets for f in (pset.folders or (pset.folder,))),
        tuple(p for pset in sets for p in pset.problems),
    )


def _infer_category(q: str) -> str:
    """semble's fallback when an annotation has no category."""
    if " " not in q.strip():
        return "symbol"
    return "architecture" if q.lower().startswith("how ") else "semantic"


def _target(raw: Any) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    s, e = raw.get("start_line"), raw.get("end_line")
    if s is None or e is None:
        return Target(str(raw["path"]))
    return Target(str(raw["path"]), int(s), int(e))


def _read_queries(name: str, file: Path) -> list[PolyQuery]:
    """One repository's questions; ValueError naming the file and entry when one is malformed."""
    try:
        items = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{file}: not readable JSON ({e})") from e
    if not isinstance(items, list):
        raise ValueError(f"{file}: expected a JSON list of questions")
    out = []
    for i, it in enumerate(items):
        try:
            cat = it.get("category")
            out.append(
                PolyQuery(
                    repo=name,
                    qid=f"{name}:{i}",
                    text=str(it["query"]),
                    category=cat if isinstance(cat, str) else _infer_category(it["query"]),
                    targets=tuple(_target(t) for t in it.get("relevant", []) + it.get("secondary", [])),
                )
            )
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{file} entry {i}: malformed question ({type(e).__name__}: {e})") from e
    return out


def load_set(folder: str | Path) -> PolyglotSet:
    """Reads repos.json, manifest.json and annotations/; ValueError when the folder is not this format. A
    repository whose annotation file is malformed is left out and named in `problems`; the rest still load."""
    folder = Path(folder)
    try:
        specs = {s["name"]: s for s in json.loads((folder / "repos.json").read_text())}
        manifest = json.loads((folder / "manifest.json").read_text())
        entries = list(manifest["repos"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{folder}: not a polyglot set (repos.json / manifest.json: {e})") from e
    repos: dict[str, RepoSpec] = {}
    queries: list[PolyQuery] = []
    problems: list[str] = []
    for entry in entries:
        name = entry["name"]
        spec = specs.get(name, entry)
        broot = spec.get("benchmark_root")
        root = folder / "repos" / name / broot if broot else folder / "repos" / name
        try:
            queries.extend(_read_queries(name, folder / "annotations" / f"{name}.json"))
        except ValueError as e:
            problems.append(str(e))
            continue
        repos[name] = RepoSpec(name, str(spec.get("language", "")), root, broot)
    final = frozenset(str(n) for n in manifest.get("final_test", ()) if n in repos)
    return PolyglotSet(folder, repos, queries, final, (folder,), tuple(problems))


def _norm(path: str, repo: str) -> str:
    path = path.replace("\\", "/")
    marker = f"/repos/{repo}/"
    if marker in path:
        path = path.split(marker, 1)[1]
    while path.startswith("./"):
        path = path[2:]
    return path


def path_matches(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def result_matches(res: Mapping[str, Any], tgt: Target, path: str) -> bool:
    if not path_matches(path, tgt.path.replace("\\", "/")):
        return False
    if tgt.start is None or tgt.end is None:
        return True
    s, e = res.get("start_line"), res.get("end_line")
    if s is None or e is None:
        return True  # a file-level result matches on path alone
    return not (int(e) < tgt.start or int(s) > tgt.end)


def _dcg(gains: Sequence[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def score_query(q: PolyQuery, results: Sequence[Mapping[str, Any]], k: int = K) -> dict[str, Any]:
    """ndcg10, hit1, recall10 and each target's first matching rank (None when not in the top k)."""
    top = list(results[:k])
    paths = [_norm(str(r.get("path", "")), q.repo) for r in top]
    ranks: list[int | None] = []
    for t in q.targets:
        rank = next(
            (i for i, (r, p) in enumerate(zip(top, paths, strict=True), 1) if result_matches(r, t, p)), None
        )
        ranks.append(rank)
    gains = [0] * k
    for rank in ranks:
        if rank is not None:
            gains[rank - 1] = 1
    n = len(q.targets)
    ideal = _dcg([1] * min(k, n)) if n else 0.0
    return {
        "ndcg10": _dcg(gains) / ideal if ideal > 0 else 0.0,
        "hit1": 1.0 if any(r == 1 for r in ranks) else 0.0,
        "recall10": (sum(1 for r in ranks if r is not None and r <= 10) / n) if n else 0.0,
        "ranks": ranks,
    }


def _mean(xs: Iterable[float]) -> float | None:
    vals = list(xs)
    return sum(vals) / len(vals) if vals else None


def _means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {m: _mean(r[m] for r in rows) for m in METRICS} | {"n": len(rows)}


def summarize(pset: PolyglotSet, run: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows: ALL and each category (macro over repositories), repo:<name>, lang:<language> (macro over its
    repositories), and the split halves split:fit / split:held-out with their categories ("split:fit/symbol").

    `run` maps query id -> {"results": [...], ...}; a query missing from the run scores zero.
    """
    per_query: dict[str, list[tuple[PolyQuery, dict[str, Any]]]] = defaultdict(list)
    missing = 0
    for q in pset.queries:
        rec = run.get(q.qid)
        missing += rec is None
        per_query[q.repo].append((q, score_query(q, (rec or {}).get("results") or [])))
    repo_rows: dict[str, dict[str, Any]] = {}
    repo_cats: dict[str, dict[str, dict[str, Any]]] = {}
    for repo, scored in sorted(per_query.items()):
        repo_rows[repo] = _means([s for _, s in scored])
        repo_cats[repo] = {
            c: _means([s for q, s in scored if q.category == c])
            for c in CATEGORIES
            if any(q.category == c for q, _ in scored)
        }

    def macro(repos: Sequence[str]) -> dict[str, dict[str, Any]]:
        out = {"ALL": _macro([repo_rows[r] for r in repos])}
        for c in CATEGORIES:
            rows = [repo_cats[r][c] for r in repos if c in repo_cats[r]]
            if rows:
                out[c] = _macro(rows)
        return out

    repos = list(repo_rows)
    rows: dict[str, dict[str, Any]] = dict(macro(repos))
    for half, names in SPLITS.items():
        inside = [r for r in repos if r in names]
        if inside and len(inside) < len(repos):
            for key, row in macro(inside).items():
                rows[f"split:{half}" if key == "ALL" else f"split:{half}/{key}"] = row
    for repo in repos:
        rows[f"repo:{repo}"] = repo_rows[repo]
        for c, row in repo_cats[repo].items():
            rows[f"repo:{repo}/{c}"] = row
    by_lang: dict[str, list[str]] = defaultdict(list)
    for repo in repos:
        by_lang[pset.repos[repo].language].append(repo)
    for lang, lang_repos in sorted(by_lang.items()):
        rows[f"lang:{lang}"] = macro(lang_repos)["ALL"]
        for c in CATEGORIES:
            cat_rows = [repo_cats[r][c] for r in lang_repos if c in repo_cats[r]]
            if cat_rows:
                rows[f"lang:{lang}/{c}"] = _macro(cat_rows)
    rows["ALL"]["missing"] = missing
    return rows


def _macro(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {m: _mean(r[m] for r in rows if r[m] is not None) for m in METRICS}
    out["repos"] = len(rows)
    out["n"] = sum(int(r["n"]) for r in rows)
    return out


def published_semble(row: str) -> float | None:
    """semble's published NDCG@10 for a summary row, where it published one."""
    if row in SEMBLE_PUBLISHED_ALL:
        return SEMBLE_PUBLISHED_ALL[row]
    if row.startswith("repo:") and "/" not in row:
        return SEMBLE_PUBLISHED_REPO.get(row[5:])
    if row.startswith("split:") and "/" not in row:
        names = SPLITS.get(row[6:], ())
        vals = [SEMBLE_PUBLISHED_REPO[n] for n in names if n in SEMBLE_PUBLISHED_REPO]
        return sum(vals) / len(vals) if vals else None
    return None


def read_run(path: str | Path) -> dict[str, dict[str, Any]]:
    """A run file in score.py's format (query_id, results[{path, start_line, end_line}]); a later line wins."""
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out[str(obj["query_id"])] = obj
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not a run line ({e})") from e
    return out


def repo_scores(
    pset: PolyglotSet, run: Mapping[str, Mapping[str, Any]], metric: str = "ndcg10"
) -> dict[str, dict[str, float]]:
    """Per repository: its mean `metric` over all its questions ("ALL", also as "lang:<language>") and per
    category — the unit that cross-validation folds and bootstraps (codesearch.eval.crossval)."""
    scored: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for q in pset.queries:
        rec = run.get(q.qid) or {}
        scored[q.repo].append((q.category, float(score_query(q, rec.get("results") or [])[metric])))
    out: dict[str, dict[str, float]] = {}
    for repo, rows in scored.items():
        per: dict[str, float] = {"ALL": sum(v for _, v in rows) / len(rows)}
        per[f"lang:{pset.repos[repo].language}"] = per["ALL"]
        for c in CATEGORIES:
            vals = [v for cat, v in rows if cat == c]
            if vals:
                per[c] = sum(vals) / len(vals)
        out[repo] = per
    return out
