from __future__ import annotations

from pathlib import Path

from codesearch.common.snapshot import SnapshotDir, list_repositories


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
    assert (snap.current() / "data").read_text() == "three"
    assert list_repositories(tmp_path / "svc") == ["repo"]

    # Old generations beyond the one kept for in-flight readers are pruned.
    g4 = snap.begin()
    snap.commit(g4)
    gens = sorted(p.name for p in snap.root.iterdir() if p.name.startswith("gen-"))
    assert len(gens) == 2 and not live1.exists()
