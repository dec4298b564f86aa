"""Query sets and run files, in the JSONL formats of ../shared/eval/README.md.

A query line: {"id", "klass", "variant", "query", "gold": [{"path", "line", "end_line"}], "notes"}.
A run line: {"id", "results": [{"path", "line", "end_line", "score"}], "latency_ms"}, best result first.
Run lines may carry "error" (a gRPC status name) and "error_message"; score.py ignores them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Query:
    """One query with its gold answers; a system under test may read only `id` and `query`."""

    id: str
    klass: str
    variant: str
    query: str
    gold: list[dict[str, Any]]
    notes: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "klass": self.klass,
            "variant": self.variant,
            "query": self.query,
            "gold": self.gold,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class Result:
    """One ranked result: a 1-based inclusive line span of a file."""

    path: str
    line: int
    end_line: int
    score: float = 0.0


@dataclass
class RunRecord:
    """What one system answered to one query."""

    id: str
    results: list[Result]
    latency_ms: float | None = None
    # gRPC status name when the call failed ("INVALID_ARGUMENT" counts as zero results, not a crash).
    error: str = ""
    error_message: str = ""
    # The server's confidence that the top hit is right (None for baselines that do not say).
    confidence: float | None = None
    # The vector tier that answered ("static", "transformer"), "" when the vector leg did not.
    vector_tier: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "results": [
                {"path": r.path, "line": r.line, "end_line": r.end_line, "score": round(r.score, 6)}
                for r in self.results
            ],
        }
        if self.latency_ms is not None:
            out["latency_ms"] = round(self.latency_ms, 3)
        if self.confidence is not None:
            out["confidence"] = round(self.confidence, 6)
        if self.vector_tier:
            out["vector_tier"] = self.vector_tier
        if self.error:
            out["error"] = self.error
            out["error_message"] = self.error_message
        return out


def load_queries(path: str | Path) -> list[Query]:
    """Reads a query JSONL file; raises ValueError naming the line on a malformed one."""
    queries: list[Query] = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                queries.append(
                    Query(
                        id=str(d["id"]),
                        klass=str(d["klass"]),
                        variant=str(d.get("variant", "")),
                        query=str(d["query"]),
                        gold=list(d["gold"]),
                        notes=dict(d.get("notes") or {}),
                    )
                )
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not a query line ({e})") from e
    return queries


def write_queries(path: str | Path, queries: Iterable[Query]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q.to_json(), ensure_ascii=False) + "\n")


def write_run(path: str | Path, records: Iterable[RunRecord]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")


def read_run(path: str | Path) -> dict[str, dict[str, Any]]:
    """Run lines by id, as raw dicts (scored exactly as score.py scores them; a later line wins)."""
    runs: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                runs[r["id"]] = r
    return runs


def tier_counts(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """How many answers of a run each vector tier gave ("none": the vector leg did not answer)."""
    return dict(sorted(Counter(r.get("vector_tier") or "none" for r in runs.values()).items()))


def format_tiers(runs: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """One line per run that has tier records: which vector tier answered its queries."""
    lines = [
        f"  {name}: " + ", ".join(f"{t} {n}" for t, n in tier_counts(recs).items())
        for name, recs in runs.items()
        if any(r.get("vector_tier") for r in recs.values())
    ]
    return "vector tier that answered, queries per run\n" + "\n".join(lines) if lines else ""


def run_dicts(records: Iterable[RunRecord]) -> dict[str, dict[str, Any]]:
    """In-memory records as the dicts read_run would give back after a write."""
    return {r.id: r.to_json() for r in records}


def select_half(queries: list[Query], half: str | None) -> list[Query]:
    """A stable split by query id (hash parity): "tune" for choosing constants, "check" for reporting them."""
    if half is None:
        return queries
    want = 0 if half == "tune" else 1
    return [q for q in queries if hashlib.sha256(q.id.encode()).digest()[0] % 2 == want]
