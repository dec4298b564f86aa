"""Repositories by name and ref: "proj" selects proj and every "proj@<ref>" beside it; commits per hit."""

from __future__ import annotations

from collections.abc import Iterable

from codesearch.common.errors import not_found
from codesearch.orchestrator.registry import RepoRecord
from codesearch.v1 import common_pb2


def select(records: dict[str, RepoRecord], names: Iterable[str], refs: Iterable[str] = ()) -> list[str]:
    """The indexed repositories that `names` (empty: all) and `refs` (empty: any) select, in name order.

    A name with "@" is one ref of a repository; a name without it is that repository and all its refs. A ref
    filter keeps repositories indexed at one of those refs (branch, tag or commit as indexed, or the commit id
    or a prefix of at least 7 hex digits). A name this registry does not know is kept as it is, for the legs to
    answer (they may hold repositories indexed by another process). NOT_FOUND when the refs select nothing."""
    names, refs = list(names), list(refs)
    chosen: set[str] = set()
    for name in names:
        matching = {r for r in records if r == name or ("@" not in name and r.startswith(name + "@"))}
        chosen |= matching or {name}
    selected = sorted(chosen) if names else sorted(records)
    if refs:
        selected = [n for n in selected if n in records and any(_at_ref(records[n], ref) for ref in refs)]
        if not selected:
            raise not_found(f"no indexed repository is at {', '.join(map(repr, refs))}")
    return selected


def _at_ref(record: RepoRecord, ref: str) -> bool:
    if record.ref == ref:
        return True
    return len(ref) >= 7 and bool(record.commit) and record.commit.startswith(ref.lower())


def stamp_commits(records: dict[str, RepoRecord], hits: Iterable[common_pb2.Hit]) -> None:
    """Sets each hit's commit from its repository's record (a directory's is "")."""
    for hit in hits:
        record = records.get(hit.location.repository)
        hit.commit = record.commit if record else ""
