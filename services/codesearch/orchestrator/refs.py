"""Repositories by name and ref: "proj" selects proj and every "proj@<ref>" beside it; commits per hit."""

from __future__ import annotations

from collections.abc import Callable, Iterable

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


def fold_identical(
    records: dict[str, RepoRecord], hashes_of: Callable[[str], dict[str, str]], hits: list[common_pb2.Hit]
) -> list[common_pb2.Hit]:
    """The hits with each span of an identical file returned once, however many searched refs hold it.

    Two hits fold when their repositories are indexed from the same root (refs of one repository, or a ref
    beside the working tree) and they name the same path, lines and file content (`hashes_of(repository)`:
    path -> content hash, as the indexer recorded it). The first, best-ranked hit stays and lists the others'
    repositories in `also_in`; the order is kept. Returns copies when anything may fold. Hashes are read only when such repositories meet in one answer.
    """
    by_root: dict[str, set[str]] = {}
    for hit in hits:
        record = records.get(hit.location.repository)
        if record is not None:
            by_root.setdefault(record.root, set()).add(record.name)
    shared = {root for root, names in by_root.items() if len(names) > 1}
    if not shared:
        return hits
    hashes: dict[str, dict[str, str]] = {}
    first: dict[tuple[str, str, int, int, str], common_pb2.Hit] = {}
    kept: list[common_pb2.Hit] = []
    for original in hits:
        hit = common_pb2.Hit()
        hit.CopyFrom(original)  # the answer may be the cache's: it is never changed in place
        loc = hit.location
        record = records.get(loc.repository)
        if record is None or record.root not in shared:
            kept.append(hit)
            continue
        if loc.repository not in hashes:
            hashes[loc.repository] = hashes_of(loc.repository)
        digest = hashes[loc.repository].get(loc.path)
        key = (record.root, loc.path, loc.start_line, loc.end_line, digest or "")
        earlier = first.get(key)
        if digest is None or earlier is None:
            first.setdefault(key, hit)
            kept.append(hit)
        elif loc.repository != earlier.location.repository and loc.repository not in earlier.also_in:
            earlier.also_in.append(loc.repository)
        else:
            kept.append(hit)  # the same repository twice: not ours to fold
    return kept
