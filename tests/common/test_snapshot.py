from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from codesearch.common import snapshot
from codesearch.common.errors import ServiceError, not_found, unavailable
from codesearch.common.snapshot import (
    SnapshotDir,
    atomic_write_text,
    dir_bytes,
    list_repositories,
    open_listed,
    read_replaced_text,
)


def test_generations_switch_atomically_and_unfinished_builds_are_ignored(tmp_path: Path) -> None:
    snap = SnapshotDir(tmp_path / "svc" / "repo")
    assert snap.current() is None and snap.version() == 0
    g1 = snap.begin()
    (g1 / "data").write_text("one")
    live1 = snap.commit(g1)
    assert snap.current() == live1 and snap.version() == 1

    # A build that dies before commit leaves generation 1 live; the next begin() clears it away.
    dead = snap.begin()
    (dead / "data").write_text("half")
    assert snap.current() == live1
    g3 = snap.begin()
    assert not (dead / "data").exists()  # the half-built generation is gone
    (g3 / "data").write_text("three")
    snap.commit(g3)
    current = snap.current()
    assert current is not None and (current / "data").read_text() == "three"
    assert list_repositories(tmp_path / "svc") == ["repo"]

    # Old generations beyond the one kept for in-flight readers are pruned.
    g4 = snap.begin()
    snap.commit(g4)
    gens = sorted(p.name for p in snap.root.iterdir() if p.name.startswith("gen-"))
    assert len(gens) == 2 and not live1.exists()


def test_a_replaced_file_is_read_again_and_an_unchanged_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "CURRENT"
    with pytest.raises(FileNotFoundError):
        read_replaced_text(path)
    atomic_write_text(path, "gen-000001\n")
    reads: list[Path] = []
    real_read = Path.read_text

    def counted(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self)
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(snapshot.Path, "read_text", counted)
    assert read_replaced_text(path) == "gen-000001\n"
    assert read_replaced_text(path) == "gen-000001\n"
    assert len(reads) == 1  # the second call only looked at the file's identity
    atomic_write_text(path, "gen-000002\n")  # a new inode, as every commit writes it
    assert read_replaced_text(path) == "gen-000002\n"
    path.write_text("gen-000003 and more\n")  # even written in place: another size
    assert read_replaced_text(path) == "gen-000003 and more\n"
    os.remove(path)
    with pytest.raises(FileNotFoundError):
        read_replaced_text(path)
    assert len(reads) == 3


def test_the_live_generation_follows_every_commit_without_rereading_between(tmp_path: Path) -> None:
    snap = SnapshotDir(tmp_path / "repo")
    live = snap.commit(snap.begin())
    assert SnapshotDir(tmp_path / "repo").current() == live  # a fresh SnapshotDir, as every leg call makes
    newer = snap.commit(snap.begin())
    assert SnapshotDir(tmp_path / "repo").current() == newer != live
    assert snap.delete() and SnapshotDir(tmp_path / "repo").current() is None


def test_open_listed_skips_a_repository_deleted_since_the_listing_and_raises_other_errors() -> None:
    def open_one(name: str) -> str:
        if name == "gone":
            raise not_found(f"repository {name!r} is not indexed")
        if name == "broken":
            raise unavailable("disk on fire")
        return name.upper()

    assert open_listed(["a", "gone", "b"], open_one) == ["A", "B"]
    with pytest.raises(ServiceError) as raised:
        open_listed(["a", "broken"], open_one)
    assert raised.value.code == grpc.StatusCode.UNAVAILABLE


def test_dir_bytes_counts_files_below_and_nothing_for_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "gen" / "sub").mkdir(parents=True)
    (tmp_path / "gen" / "a").write_bytes(b"x" * 10)
    (tmp_path / "gen" / "sub" / "b").write_bytes(b"y" * 5)
    assert dir_bytes(tmp_path / "gen") == 15
    assert dir_bytes(tmp_path / "deleted") == 0
    assert dir_bytes(None) == 0


def test_dir_bytes_of_a_folder_removed_while_it_is_walked_is_what_was_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = tmp_path / "gen"
    for sub in ("a", "b"):
        (gen / sub).mkdir(parents=True)
        (gen / sub / "data").write_bytes(b"x" * 7)
    real_walk = os.walk

    def walk_then_delete(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
        for i, entry in enumerate(real_walk(top)):
            yield entry
            if i == 0:  # the generation is pruned after its top folder was listed
                shutil.rmtree(gen)

    monkeypatch.setattr(snapshot.os, "walk", walk_then_delete)
    assert dir_bytes(gen) == 0


def test_delete_unlists_before_it_removes_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = SnapshotDir(tmp_path / "svc" / "repo")
    (snap.commit(snap.begin()) / "data").write_text("x")
    seen: list[tuple[list[str], Path | None]] = []
    real = shutil.rmtree

    def rmtree(path: Path, *a: Any, **k: Any) -> None:
        seen.append((list_repositories(tmp_path / "svc"), snap.current()))
        return real(path, *a, **k)

    monkeypatch.setattr(snapshot.shutil, "rmtree", rmtree)
    assert snap.delete() and seen == [([], None)]  # nothing lists it while its files go
    assert not snap.root.exists() and not snap.delete()
