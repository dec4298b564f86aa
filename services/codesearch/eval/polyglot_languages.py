"""NDCG@10 per language and category of a polyglot run, and the same table for two runs side by side.

The rows come from polyglot.summarize (`lang:<language>` and `lang:<language>/<category>`, each a macro over the
language's repositories). `format_languages(runs)` is one block of the polyglot report; the command compares two
summary.json files, e.g. the graph leg without and with a set of languages:

python -m codesearch.eval.polyglot_languages BEFORE/summary.json AFTER/summary.json [--run auto]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codesearch.eval.polyglot import CATEGORIES

COLUMNS = ("ALL", *CATEGORIES)
LABEL_WIDTH = 14
CELL = 8


def languages(rows: Mapping[str, Any]) -> list[str]:
    return sorted(k[5:] for k in rows if k.startswith("lang:") and "/" not in k)


def cell(rows: Mapping[str, Any], language: str, column: str) -> float | None:
    key = f"lang:{language}" if column == "ALL" else f"lang:{language}/{column}"
    value = rows.get(key, {}).get("ndcg10")
    return None if value is None else float(value)


def _f(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def format_languages(runs: Mapping[str, Mapping[str, Any]]) -> str:
    """One table per run: a row per language, NDCG@10 for all queries and for each category."""
    blocks = []
    for name, run in runs.items():
        rows = run["summary"]
        head = f"{'language':<{LABEL_WIDTH}}" + "".join(f"{c:>{CELL + 5}}" for c in COLUMNS)
        lines = [f"NDCG@10 per language and category, {name}", head, "-" * len(head)]
        for lang in languages(rows):
            cells = ""
            for c in COLUMNS:
                key = f"lang:{lang}" if c == "ALL" else f"lang:{lang}/{c}"
                n = rows.get(key, {}).get("n")
                cells += f"{_f(cell(rows, lang, c)) + (f' ({n})' if n else ''):>{CELL + 5}}"
            lines.append(f"{lang:<{LABEL_WIDTH}}{cells}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def compare_languages(before: Mapping[str, Any], after: Mapping[str, Any], only: Sequence[str] = ()) -> str:
    """Before, after and the difference per language and category (rows of two summarize() results)."""
    langs = [lang for lang in languages(after) if not only or lang in only]
    head = f"{'language':<{LABEL_WIDTH}}" + "".join(f"{c:>{3 * CELL}}" for c in COLUMNS)
    sub = f"{'':<{LABEL_WIDTH}}" + "".join(
        f"{'before':>{CELL}}{'after':>{CELL}}{'delta':>{CELL}}" for _ in COLUMNS
    )
    lines = [head, sub, "-" * len(sub)]
    for lang in langs:
        cells = ""
        for c in COLUMNS:
            b, a = cell(before, lang, c), cell(after, lang, c)
            delta = None if a is None or b is None else a - b
            cells += f"{_f(b):>{CELL}}{_f(a):>{CELL}}{_f(delta, signed=True):>{CELL}}"
        lines.append(f"{lang:<{LABEL_WIDTH}}{cells}")
    return "\n".join(lines)


def _rows(path: Path, run: str) -> Mapping[str, Any]:
    summary = json.loads(path.read_text(encoding="utf-8"))
    runs = summary.get("runs") or {}
    if run not in runs:
        raise ValueError(f"{path} has no run {run!r}; it has {', '.join(runs) or 'none'}")
    rows: Mapping[str, Any] = runs[run]["summary"]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="NDCG@10 per language and category, before and after")
    parser.add_argument("before", type=Path, help="summary.json of the earlier run")
    parser.add_argument("after", type=Path, help="summary.json of the later run")
    parser.add_argument("--run", default="auto", help="the mode (run name) to compare (default auto)")
    parser.add_argument("--languages", default="", help="comma-separated languages (default: all)")
    args = parser.parse_args(argv)
    try:
        before, after = _rows(args.before, args.run), _rows(args.after, args.run)
    except (OSError, ValueError) as e:
        print(f"polyglot_languages: {e}", file=sys.stderr)
        return 2
    only = [x.strip() for x in args.languages.split(",") if x.strip()]
    print(compare_languages(before, after, only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
