"""Language coverage of the graph and the chunker on real repositories, and the cost of parsing them.

python -m codesearch_lab.bench.languages polyglot [--root ../shared/eval/polyglot] [--repos a,b]
    per repository: files, files with parse errors, definitions, call edges, import edges, chunks, per language
python -m codesearch_lab.bench.languages speed [--root ...] [--repos a,b] [--rounds 3] [--baseline OLD/services]
        [--clock wall|cpu]
    per-file indexing time of the one-parse path against the two-parse path it replaced, same run, as a ratio;
    with --baseline (a `services` folder of an older checkout, e.g. from `git archive`), also against that code's
    own path (its chunker's parse plus its graph leg's parse), run in a subprocess between the rounds
python -m codesearch_lab.bench.languages symbols [--root ...] [--repos a,b] [--baseline OLD/services]
    per language: the polyglot set's symbol queries whose name the graph defines in a labelled file (top 1 / top 10
    of FindDefinitions' lookup), for this code and, with --baseline, for an older checkout, each in a subprocess
python -m codesearch_lab.bench.languages accuracy [--samples tests/graph/accuracy] [--verbose]
    definition and call-site precision/recall per language against hand-written answers for real files

Both go through the indexer's own functions (index_file, graph_file) and the graph store, as an index run does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codesearch.common.languages import ProjectHint, detect_language, is_header
from codesearch.common.walker import read_text_file, walk
from codesearch.graph.store import (
    DB_NAME,
    build_generation,
    connect_readonly,
    inputs_from_update,
    parse_files,
)
from codesearch.orchestrator.chunker import chunk_lines
from codesearch.orchestrator.indexed_file import graph_file, index_file

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_ROOT = REPO_ROOT.parent / "shared" / "eval" / "polyglot"
DEFAULT_SAMPLES = REPO_ROOT / "tests" / "graph" / "accuracy"
MAX_FILE_BYTES = 1 << 20  # the indexer's default limit
THIS_SERVICES = Path(__file__).resolve().parents[2]  # the `services` folder of this checkout


@dataclass
class RepoFiles:
    name: str
    root: Path
    files: list[tuple[str, bytes]] = field(default_factory=list)


def load_repos(root: Path, only: list[str]) -> list[RepoFiles]:
    """The polyglot repositories (their benchmark roots), read as the indexer reads them."""
    out = []
    for entry in json.loads((root / "repos.json").read_text()):
        name = entry["name"]
        folder = root / "repos" / name / (entry.get("benchmark_root") or "")
        if not folder.is_dir() or (only and name not in only):
            continue
        repo = RepoFiles(name, folder)
        for wf in walk(folder, MAX_FILE_BYTES).files:
            data, _reason = read_text_file(wf.abs_path, MAX_FILE_BYTES)
            if data is not None:
                repo.files.append((wf.rel_path, data))
        out.append(repo)
    return out


def project_hint(repo: RepoFiles) -> ProjectHint:
    """What the indexer knows of the project around each file: its file names and its headers' macros."""
    return ProjectHint.from_paths(p for p, _ in repo.files).with_macros(
        d for p, d in repo.files if is_header(p)
    )


@dataclass(frozen=True)
class RepoFigures:
    """One repository's parse figures (a row of the `polyglot` table)."""

    files: int
    parsed: int
    errors: int  # files whose parse had errors
    definitions: int
    call_edges: int
    import_edges: int
    chunks: int
    languages: dict[str, int]  # files per language, most first


def index_repo(repo: RepoFiles, db: Path) -> RepoFigures:
    """Indexes one repository through the indexer's parse and the graph store; returns its figures."""
    project = project_hint(repo)
    graph_files = []
    chunks = 0
    for path, data in repo.files:
        indexed, parsed = index_file(repo.name, path, data, project)
        chunks += len(indexed.chunks)
        graph_files.append(graph_file(indexed, parsed))
    inputs = inputs_from_update(graph_files)
    build_generation(None, db, inputs, [], True, 1)
    conn = connect_readonly(db)
    try:
        (call_edges,) = conn.execute("SELECT count(*) FROM call_targets").fetchone()
        (import_edges,) = conn.execute(
            "SELECT count(*) FROM imports WHERE target_file_id NOT NULL"
        ).fetchone()
        (n_defs,) = conn.execute("SELECT count(*) FROM defs").fetchone()
    finally:
        conn.close()
    with_grammar = [f for f in inputs if f.extraction is not None]
    return RepoFigures(
        files=len(inputs),
        parsed=len(with_grammar),
        errors=sum(1 for f in with_grammar if f.extraction and f.extraction.error_count > 0),
        definitions=n_defs,
        call_edges=call_edges,
        import_edges=import_edges,
        chunks=chunks,
        languages=dict(Counter(f.language or "(none)" for f in inputs).most_common()),
    )


def polyglot(root: Path, only: list[str]) -> None:
    print(
        f"{'repository':18} {'files':>6} {'parsed':>6} {'errors':>6} {'err%':>5} {'defs':>7} {'calls':>7} "
        f"{'imports':>7} {'chunks':>7}  languages"
    )
    for repo in load_repos(root, only):
        with tempfile.TemporaryDirectory() as tmp:
            r = index_repo(repo, Path(tmp) / DB_NAME)
        langs = ", ".join(f"{k} {v}" for k, v in r.languages.items())
        print(
            f"{repo.name:18} {r.files:6d} {r.parsed:6d} {r.errors:6d} {100 * r.errors / max(1, r.files):5.1f} "
            f"{r.definitions:7d} {r.call_edges:7d} {r.import_edges:7d} {r.chunks:7d}  {langs}"
        )


def _two_parse_path(name: str, files: list[tuple[str, bytes]], project: ProjectHint) -> None:
    """What an index run did before: the chunker parsed each file, then the graph leg parsed it again."""
    from codesearch.common.parsing import extract

    sent = []
    for path, data in files:
        language = detect_language(path, data, project)
        parsed = extract(path, language, data, project.macros)
        lines = data.decode("utf-8", "replace").split("\n")
        chunk_lines(lines, list(parsed.definitions) if parsed else [])
        sent.append((path, language, hashlib.sha256(data).hexdigest(), data))
    parse_files(sent)


def _one_parse_path(name: str, files: list[tuple[str, bytes]], project: ProjectHint) -> None:
    """Now: one parse in the indexer, its result carried to the graph leg's store over the wire format."""
    graph_files = []
    for path, data in files:
        indexed, parsed = index_file(name, path, data, project)
        graph_files.append(graph_file(indexed, parsed).SerializeToString())
    from codesearch.v1 import common_pb2

    inputs_from_update(common_pb2.IndexedFile.FromString(b) for b in graph_files)


# Run with PYTHONPATH at an older checkout, per file: its own index path. A checkout with the one-parse indexer
# (index_file/graph_file) runs it as _one_parse_path does, with each repository's project hint; an older one runs
# its indexer's chunking parse and then its graph leg's parse.
_BASELINE_SCRIPT = """
import json, sys, time
from collections import defaultdict
from pathlib import Path
from codesearch.orchestrator import indexer
from codesearch.graph.store import parse_files
repos = defaultdict(list)
for repo, p, a in json.loads(sys.stdin.read()):
    repos[repo].append((p, Path(a).read_bytes()))
n = sum(len(f) for f in repos.values())
t0 = time.perf_counter()
if hasattr(indexer, "index_file"):
    from codesearch.common.languages import ProjectHint
    from codesearch.graph.store import inputs_from_update
    from codesearch.v1 import common_pb2
    for repo, files in repos.items():
        project = ProjectHint.from_paths(p for p, _ in files)
        if hasattr(project, "with_macros"):  # the macro table is built per run, as the indexer builds it
            from codesearch.common.languages import is_header
            project = project.with_macros(d for p, d in files if is_header(p))
        sent = [indexer.graph_file(*indexer.index_file(repo, p, d, project)).SerializeToString() for p, d in files]
        inputs_from_update(common_pb2.IndexedFile.FromString(b) for b in sent)
else:
    for files in repos.values():
        for path, data in files:
            f = indexer.make_indexed_file("bench", path, data)
            parse_files([(f.path, f.language, f.content_hash, f.content)])
print((time.perf_counter() - t0) / max(1, n))
"""

# Runs under either checkout (PYTHONPATH): builds each repository's graph with its parse_files/build_generation
# and asks GraphReader.lookup for every symbol query; prints {repo: [[hit@1, hit@10], ...]}.
_SYMBOLS_SCRIPT = """
import hashlib, json, sys, tempfile
from pathlib import Path
from codesearch.graph.query import GraphReader
from codesearch.graph.store import DB_NAME, build_generation, connect_readonly, parse_files
out = {}
for repo in json.loads(sys.stdin.read()):
    files = [(p, Path(a).read_bytes()) for p, a in repo["files"]]
    parsed = parse_files((p, "", hashlib.sha256(d).hexdigest(), d) for p, d in files)
    with tempfile.TemporaryDirectory() as tmp:
        build_generation(None, Path(tmp) / DB_NAME, parsed, [], True, 1)
        reader = GraphReader(repo["name"], connect_readonly(Path(tmp) / DB_NAME))
        hits = []
        for query, targets in repo["queries"]:
            paths = [d.path for d in reader.lookup(query)[1][:10]]
            hits.append([bool(paths) and paths[0] in targets, any(p in targets for p in paths)])
        out[repo["name"]] = hits
print(json.dumps(out))
"""


def _symbol_queries(root: Path, repo: RepoFiles) -> list[tuple[str, list[str]]]:
    """(query, labelled paths relative to the indexed folder) of the repository's symbol queries."""
    prefix = repo.root.relative_to(root / "repos" / repo.name).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    out = []
    for q in json.loads((root / "annotations" / f"{repo.name}.json").read_text()):
        if q["category"] != "symbol":
            continue
        targets = [t if isinstance(t, str) else t["path"] for t in q["relevant"] + q.get("secondary", [])]
        out.append((q["query"], [t.removeprefix(prefix) for t in targets]))
    return out


def _symbol_hits(services: Path, root: Path, repos: list[RepoFiles]) -> dict[str, list[list[bool]]]:
    listing = [
        {
            "name": r.name,
            "files": [(p, str(r.root / p)) for p, _ in r.files],
            "queries": _symbol_queries(root, r),
        }
        for r in repos
    ]
    env = {**os.environ, "PYTHONPATH": str(services)}
    done = subprocess.run(
        [sys.executable, "-c", _SYMBOLS_SCRIPT],
        input=json.dumps(listing),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def symbols(root: Path, only: list[str], baseline: Path | None) -> None:
    repos = load_repos(root, only)
    language = {e["name"]: e["language"] for e in json.loads((root / "repos.json").read_text())}
    runs = {"this code": _symbol_hits(REPO_ROOT / "services", root, repos)}
    if baseline is not None:
        runs["baseline"] = _symbol_hits(baseline, root, repos)
    print(f"{'language':12} {'queries':>7}  " + "  ".join(f"{name + ' @1/@10':>22}" for name in runs))
    for lang in sorted({language[r.name] for r in repos}):
        names = [r.name for r in repos if language[r.name] == lang]
        n = sum(len(runs["this code"][r]) for r in names)
        cells = []
        for hits in runs.values():
            at1 = sum(h[0] for r in names for h in hits[r])
            at10 = sum(h[1] for r in names for h in hits[r])
            cells.append(f"{at1 / max(1, n):10.3f} {at10 / max(1, n):10.3f}")
        print(f"{lang:12} {n:7d}  " + "  ".join(f"{c:>22}" for c in cells))


def _baseline_seconds_per_file(baseline: Path, repos: list[RepoFiles], clock: str = "wall") -> float:
    listing = json.dumps([(r.name, p, str(r.root / p)) for r in repos for p, _ in r.files])
    env = {**os.environ, "PYTHONPATH": str(baseline)}
    script = _BASELINE_SCRIPT if clock == "wall" else _BASELINE_SCRIPT.replace("perf_counter", "process_time")
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=listing,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def speed(root: Path, only: list[str], rounds: int, baseline: Path | None, clock: str = "wall") -> None:
    """Median seconds per file of each path over `rounds` interleaved rounds, and their ratios. `clock="cpu"`
    times the baseline comparison in CPU seconds of its process (on a machine shared with other jobs the wall
    clock of one round swung 0.95-1.74x against the next, the same code on both sides)."""
    repos = load_repos(root, only)
    n_files = sum(len(r.files) for r in repos)
    hints = {r.name: project_hint(r) for r in repos}
    old: list[float] = []
    new: list[float] = []
    base: list[float] = []
    here: list[float] = []
    for _ in range(rounds):
        for path_fn, times in ((_two_parse_path, old), (_one_parse_path, new)):
            t0 = time.perf_counter()
            for r in repos:
                path_fn(r.name, r.files, hints[r.name])
            times.append((time.perf_counter() - t0) / max(1, n_files))
        if baseline is not None:  # both checkouts through the same script, alternating, in fresh processes
            here.append(_baseline_seconds_per_file(THIS_SERVICES, repos, clock))
            base.append(_baseline_seconds_per_file(baseline, repos, clock))
    o, n = statistics.median(old), statistics.median(new)
    print(f"{n_files} files in {len(repos)} repositories, {rounds} rounds (median)")
    print(f"two parses (chunker + graph leg), this code: {o * 1e3:.3f} ms/file")
    print(f"one parse (shared), this code:               {n * 1e3:.3f} ms/file")
    print(f"ratio one/two parses: {n / o:.3f}")
    if base:
        b = statistics.median(base)
        print(f"the baseline checkout's own path ({baseline}, {clock} clock): {b * 1e3:.3f} ms/file")
        h = statistics.median(here)
        print(f"this code through the same script:  {h * 1e3:.3f} ms/file")
        print(
            f"ratio this code / baseline (same script, per round: "
            f"{', '.join(f'{x / y:.3f}' for x, y in zip(here, base, strict=True))}): {h / b:.3f}"
        )


@dataclass
class Score:
    """Matches of (line, name) pairs against the answers."""

    found: int = 0
    expected: int = 0
    right: int = 0

    def add(self, got: set[tuple[int, str]], truth: set[tuple[int, str]]) -> None:
        self.found += len(got)
        self.expected += len(truth)
        self.right += len(got & truth)

    def precision(self) -> float:
        return self.right / self.found if self.found else 1.0

    def recall(self) -> float:
        return self.right / self.expected if self.expected else 1.0


def _names(pairs: Iterable[tuple[int, str]] | Iterable[list[Any]]) -> set[tuple[int, str]]:
    return {(int(line), str(name).strip("`")) for line, name in pairs}


def score_samples(samples: Path, verbose: bool = False) -> dict[str, tuple[Score, Score]]:
    """(definitions, calls) scores per language over the samples in `samples`/truth.json."""
    from codesearch.common.parsing import extract

    truth = json.loads((samples / "truth.json").read_text())["samples"]
    scores: dict[str, tuple[Score, Score]] = {}
    for file_name, answer in sorted(truth.items()):
        language = answer["language"]
        ex = extract(file_name, language, (samples / file_name).read_bytes())
        got_defs = _names((d.start_line, d.name) for d in ex.definitions) if ex else set()
        got_calls = _names((c.line, c.callee) for c in ex.calls) if ex else set()
        want_defs, want_calls = _names(answer["definitions"]), _names(answer["calls"])
        defs, calls = scores.setdefault(language, (Score(), Score()))
        defs.add(got_defs, want_defs)
        calls.add(got_calls, want_calls)
        if verbose:
            for label, got, want in (("def", got_defs, want_defs), ("call", got_calls, want_calls)):
                for miss in sorted(want - got):
                    print(f"  {file_name}: missed {label} {miss}")
                for extra in sorted(got - want):
                    print(f"  {file_name}: extra {label} {extra}")
    return scores


def accuracy(samples: Path, verbose: bool) -> None:
    scores = score_samples(samples, verbose)
    print(f"{'language':12} {'def P':>6} {'def R':>6} {'n':>4}   {'call P':>6} {'call R':>6} {'n':>4}")
    for language, (defs, calls) in sorted(scores.items()):
        print(
            f"{language:12} {defs.precision():6.3f} {defs.recall():6.3f} {defs.expected:4d}   "
            f"{calls.precision():6.3f} {calls.recall():6.3f} {calls.expected:4d}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["polyglot", "speed", "accuracy", "symbols"])
    ap.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES)
    ap.add_argument("--verbose", action="store_true", help="accuracy: list every miss and every extra")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--repos", default="", help="comma-separated repository names (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--baseline", type=Path, default=None, help="speed: a `services` folder of an older checkout"
    )
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="speed: how the --baseline comparison is timed",
    )
    args = ap.parse_args()
    only = [r for r in args.repos.split(",") if r]
    if args.command == "polyglot":
        polyglot(args.root.resolve(), only)
    elif args.command == "accuracy":
        accuracy(args.samples, args.verbose)
    elif args.command == "symbols":
        symbols(args.root.resolve(), only, args.baseline)
    else:
        speed(args.root.resolve(), only, args.rounds, args.baseline, args.clock)


if __name__ == "__main__":
    main()
