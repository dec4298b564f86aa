"""The blind set's fetch: hashes, unpacking, target checks and refusals, over real archives made here.

The registry clients themselves are not called (a test must not depend on a registry answering): each test puts
the archive where the fetch caches what a client downloaded, and everything after the download runs for real.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from codesearch.eval.polyglot import load_set
from codesearch_lab import excluded
from codesearch_lab.blind import fetch, final_test
from codesearch_lab.blind.__main__ import main as blind_main

CODE = {"pkg-1.0/src/router.py": "def route(path):\n    return path\n", "pkg-1.0/src/util.py": "X = 1\n"}
QUESTIONS: list[dict[str, object]] = [
    {"query": "how are paths routed", "category": "architecture", "relevant": ["router.py"], "secondary": []},
    {
        "query": "route",
        "category": "symbol",
        "relevant": [{"path": "router.py", "start_line": 1, "end_line": 2}],
    },
]


def _tarball(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def _project(tmp: Path, name: str, questions: list[dict[str, object]] = QUESTIONS) -> dict[str, str]:
    """A manifest entry whose archive sits in the cache and whose annotation file is written."""
    archives = tmp / "dest" / "archives"
    archives.mkdir(parents=True, exist_ok=True)
    archive = archives / f"{name}--{name}-1.0.tgz"
    _tarball(archive, CODE)
    (tmp / "annotations").mkdir(exist_ok=True)
    ann = tmp / "annotations" / f"{name}.json"
    ann.write_text(json.dumps(questions))
    return {"name": name, "language": "python", "registry": "npm", "package": name, "version": "1.0",
            "root": "pkg-1.0/src", "url": f"https://example.org/{name}", "licence": "MIT",
            "annotations": f"annotations/{name}.json", "sha256": fetch.sha256_of(archive),
            "annotations_sha256": fetch.sha256_of(ann)}  # fmt: skip


def _fetch(
    tmp: Path, projects: list[dict[str, str]], refuse: excluded.Excluded | None = None
) -> fetch.Outcome:
    lines: list[str] = []
    out = fetch.fetch_all(
        {"projects": projects}, tmp / "dest", refuse=refuse, annotations_dir=tmp, log=lines.append
    )
    return out


def test_fetch_lays_out_a_set_that_codesearch_eval_reads(tmp_path: Path) -> None:
    out = _fetch(tmp_path, [_project(tmp_path, "good")])
    assert out.failed == {}
    assert (tmp_path / "dest" / "repos" / "good" / "pkg-1.0" / "src" / "router.py").read_text() == CODE[
        "pkg-1.0/src/router.py"
    ]
    pset = load_set(tmp_path / "dest")
    assert list(pset.repos) == ["good"] and len(pset.queries) == 2
    assert pset.repos["good"].root == tmp_path / "dest" / "repos" / "good" / "pkg-1.0" / "src"


def test_each_bad_entry_is_named_with_its_reason_and_the_rest_still_fetch(tmp_path: Path) -> None:
    good = _project(tmp_path, "good")
    wrong_hash = _project(tmp_path, "hashed") | {"sha256": "0" * 64}
    missing = _project(tmp_path, "missing", [{"query": "q", "category": "semantic", "relevant": ["nope.py"]}])
    bad_lines = _project(
        tmp_path, "lines", [{"query": "q", "category": "symbol", "relevant": [{"path": "util.py", "start_line": 1,
                                                                               "end_line": 9}]}]
    )  # fmt: skip
    malformed = _project(tmp_path, "malformed", [{"category": "semantic", "relevant": ["util.py"]}])
    bad_category = _project(tmp_path, "cat", [{"query": "q", "category": "vibes", "relevant": ["util.py"]}])
    edited = _project(tmp_path, "edited")
    (tmp_path / "annotations" / "edited.json").write_text(json.dumps(QUESTIONS[:1]))  # a quiet edit
    no_root = _project(tmp_path, "rootless") | {"root": "pkg-1.0/lib"}
    out = _fetch(tmp_path, [good, wrong_hash, missing, bad_lines, malformed, bad_category, edited, no_root])
    assert [r["name"] for r in out.ok] == ["good"]
    assert "the manifest pins " + "0" * 64 in out.failed["hashed"]
    assert "target nope.py does not exist" in out.failed["missing"]
    assert "lines 1-9 are not inside util.py (1 lines)" in out.failed["lines"]
    assert (
        "missing.json" not in out.failed["malformed"]
        and "entry 0: needs a non-empty 'query'" in out.failed["malformed"]
    )
    assert "category must be one of" in out.failed["cat"]
    assert "changed since it was frozen" in out.failed["edited"]
    assert "root pkg-1.0/lib is not a folder" in out.failed["rootless"]
    manifest = json.loads((tmp_path / "dest" / "manifest.json").read_text())
    assert [r["name"] for r in manifest["repos"]] == ["good"] and set(manifest["failed"]) == set(out.failed)


def test_an_archive_member_that_leaves_the_folder_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tgz"
    _tarball(archive, {"../escape.txt": "x"})
    with pytest.raises(fetch.FetchError, match="cannot unpack"):
        fetch.unpack(archive, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


def test_held_out_and_polyglot_projects_are_refused_by_name_and_by_url(tmp_path: Path) -> None:
    page = tmp_path / "held-out.md"
    page.write_text("| language | project | repository |\n| --- | --- | --- |\n"
                    "| go | gin | github.com/gin-gonic/gin |\n| kotlin | kotlinx-coroutines | "
                    "github.com/Kotlin/kotlinx.coroutines |\n")  # fmt: skip
    repos = tmp_path / "repos.json"
    repos.write_text(json.dumps([{"name": "chi", "url": "https://github.com/go-chi/chi.git"}]))
    refuse = excluded.load(page, repos)
    assert refuse.reason("gin") and refuse.reason("Kotlinx.Coroutines") and refuse.reason("chi")
    assert refuse.reason("router", "https://github.com/gin-gonic/gin.git")  # a fork's other name, same URL
    assert refuse.reason("x", "https://github.com/someone/gin")  # a fork keeps the name
    assert refuse.reason("rayon", "https://github.com/rayon-rs/rayon") is None
    out = _fetch(tmp_path, [_project(tmp_path, "gin"), _project(tmp_path, "fine")], refuse)
    assert out.failed["gin"].startswith("refused: held out (gin")
    assert [r["name"] for r in out.ok] == ["fine"]


def test_the_shipped_manifest_names_no_excluded_project_and_pins_everything(shared_eval: Path) -> None:
    manifest = fetch.load_manifest()
    refuse = excluded.load()
    projects = manifest["projects"]
    assert len(projects) >= 40 and len({p["language"] for p in projects}) >= 15
    for raw in projects:
        p = fetch.Project.from_json(raw)
        assert refuse.reason(p.name, p.url) is None, p.name
        assert len(p.sha256) == 64 and len(p.annotations_sha256) == 64, p.name
        assert fetch.sha256_of(fetch.HERE / p.annotations) == p.annotations_sha256, p.name
    assert len(manifest["final_test"]["projects"]) == final_test.FINAL_TEST_SIZE


def test_the_final_test_is_drawn_once(tmp_path: Path) -> None:
    manifest = {"projects": [{"name": f"p{i}"} for i in range(12)]}
    chosen = final_test.draw(manifest, seed=7, count=3)
    assert chosen == final_test.draw({"projects": manifest["projects"]}, seed=7, count=3)  # seeded
    with pytest.raises(ValueError, match="never redraw"):
        final_test.draw(manifest, seed=8, count=3)


def test_cli_says_plainly_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert blind_main(["fetch", "--manifest", str(tmp_path / "none.json")]) == 2
    assert "not readable JSON" in capsys.readouterr().err
