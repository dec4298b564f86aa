"""The ripgrep baseline: ripgrep called the way a plain user would, scored like any mode.

Per query (see patterns.py for how the text is picked):
  - quoted message, identifier, or the subject of a templated question -> `rg -n -F -e TEXT`
    (fixed string, case-sensitive: what one types for a name or a pasted error message);
  - a sentence (concept, paraphrase) -> `rg -n -i -w -F -e W1 -e W2 ...` over its words (patterns.query_words):
    a user greps for the words they have; any one matching line is a result.
Every matching line is one result ({path, line, end_line: line}), in ripgrep's output order; `--sort path`
makes that order deterministic (ripgrep's default order depends on thread timing). `--no-config` ignores any
RIPGREPRC; .gitignore and hidden-file rules stay as a user has them. Latency is the wall time of the process.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codesearch.eval.patterns import derive, query_words
from codesearch.eval.runfile import Query, Result, RunRecord

RG_TIMEOUT_S = 60.0  # a whole-repository scan takes milliseconds; a minute means something is wrong
BASE_ARGS = ("--no-config", "--line-number", "--with-filename", "--no-heading", "--null", "--color", "never")


def rg_args(query: str) -> list[str] | None:
    """The ripgrep arguments (after the binary, before the path) for a query; None when there is nothing to grep."""
    p = derive(query)
    if p.kind in ("quoted", "subject", "identifier"):
        return [*BASE_ARGS, "--sort", "path", "-F", "-e", p.text]
    words = query_words(query)
    if not words:
        return None
    args = [*BASE_ARGS, "--sort", "path", "-i", "-w", "-F"]
    for w in words:
        args += ["-e", w]
    return args


def parse_output(out: bytes, limit: int) -> list[Result]:
    """Lines of `PATH\\0LINE:TEXT`, paths relative to the search root ('./' stripped)."""
    results: list[Result] = []
    for raw in out.split(b"\n"):
        if len(results) >= limit:
            break
        path_b, sep, rest = raw.partition(b"\0")
        if not sep:
            continue
        line_b, _, _ = rest.partition(b":")
        try:
            line = int(line_b)
        except ValueError:
            continue
        path = path_b.decode("utf-8", "surrogateescape")
        if path.startswith("./"):
            path = path[2:]
        # ripgrep has no score; descending rank keeps "higher is better" for readers of the run file.
        results.append(Result(path=path, line=line, end_line=line, score=float(limit - len(results))))
    return results


def search_one(rg: str, root: Path, q: Query, limit: int) -> RunRecord:
    args = rg_args(q.query)
    if args is None:
        return RunRecord(id=q.id, results=[], latency_ms=0.0)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [rg, *args, "."],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RG_TIMEOUT_S,
        check=False,
    )
    ms = (time.perf_counter() - t0) * 1000.0
    if proc.returncode not in (0, 1):  # 1 means no match
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return RunRecord(q.id, [], ms, error="RG_ERROR", error_message=msg[0] if msg else "")
    return RunRecord(id=q.id, results=parse_output(proc.stdout, limit), latency_ms=ms)


def find_rg() -> str:
    rg = shutil.which("rg")
    if rg is None:
        raise FileNotFoundError("ripgrep (rg) is not on PATH; install it to run the ripgrep baseline")
    return rg


def run_ripgrep(
    queries: Sequence[Query],
    root: Path,
    limit: int = 10,
    concurrency: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[RunRecord]:
    rg = find_rg()
    if not root.is_dir():
        raise NotADirectoryError(f"--root {root} is not a directory")
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        records = []
        for i, rec in enumerate(pool.map(lambda q: search_one(rg, root, q, limit), queries), 1):
            records.append(rec)
            if progress:
                progress(i)
    return records
