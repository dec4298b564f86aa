"""The mining run over small real packages in tmp_path: shards, manifest, refusals, skip reasons and resume.

No network: every unit is local (a folder made here); the registry lists are an empty folder.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from codesearch_lab import excluded
from codesearch_lab.mining import run as mining_run
from codesearch_lab.mining import sources

PY = (
    '"""Token helpers for the query parser."""\n\n\ndef split_words(text):\n'
    '    """Splits the text into lowercase words, dropping punctuation."""\n'
    "    out = []\n    for w in text.split():\n        out.append(w.strip('.,;').lower())\n    return out\n"
)
GO = (
    "package store\n\n// Open opens the database file at path, creating it when missing.\n"
    "func Open(path string) (*DB, error) {\n\tf, err := os.OpenFile(path, os.O_CREATE, 0o644)\n"
    "\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn &DB{f: f}, nil\n}\n"
)
JS = (
    "/**\n * Debounces a function so it runs once after calls stop for the given delay.\n */\n"
    "function debounce(fn, delay) {\n  let t;\n  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), delay); };\n}\n"
)


def _package(root: Path, name: str, files: dict[str, str | bytes]) -> sources.Unit:
    folder = root / name
    for rel, content in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (folder / rel).write_bytes(content)
        else:
            (folder / rel).write_text(content)
    return sources.Unit(f"npm:{name}@1.0", "npm", name, "1.0", "local", str(folder), "MIT",
                        [f"https://github.com/someone/{name}"])  # fmt: skip


def _refuse(tmp: Path) -> excluded.Excluded:
    page = tmp / "held-out-projects.md"
    page.write_text(
        "| language | project | repository |\n| --- | --- | --- |\n| python | flask | github.com/pallets/flask |\n"
    )
    poly = tmp / "repos.json"
    poly.write_text(json.dumps([{"name": "zod", "url": "https://github.com/colinhacks/zod"}]))
    blind = tmp / "blind-manifest.json"
    blind.write_text(json.dumps({"projects": [
        {"name": "gorilla-mux", "registry": "go", "package": "github.com/gorilla/mux", "url": "https://github.com/gorilla/mux"},
        {"name": "rich", "registry": "pypi", "package": "rich", "url": "https://github.com/Textualize/rich"},
    ]}))  # fmt: skip
    return excluded.load_all(page, poly, blind)


@pytest.fixture
def setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[mining_run.Options, excluded.Excluded, list[sources.Unit]]:
    pkgs = tmp_path / "pkgs"
    units = [
        _package(
            pkgs, "tokens", {"tokens/words.py": PY, "README.md": "# tokens\n", "blob.bin": b"\0\1\2" * 10}
        ),
        _package(pkgs, "store", {"store.go": GO, "big.go": "// x\n" + "var a = 1\n" * 60_000}),
        _package(
            pkgs,
            "debounce",
            {"index.js": JS, "copy.js": JS, "vendor/rich/r.py": PY.replace("split_words", "other")},
        ),
        _package(pkgs, "rich", {"r.py": PY}),  # blind set, by name
    ]
    fork = _package(pkgs, "fork", {"f.py": PY})  # held out, by repository URL: a fork under another name
    units.append(sources.Unit("npm:flask-fork@1.0", "npm", "flask-fork", "1.0", "local", fork.root, "MIT",
                              ["https://github.com/pallets/flask.git"]))  # fmt: skip
    monkeypatch.setattr(sources, "local_units", lambda: list(units))
    (tmp_path / "lists").mkdir()
    opts = mining_run.Options(
        out=tmp_path / "out", block_stdlib=False, lists=tmp_path / "lists", command=["test"]
    )
    return opts, _refuse(tmp_path), units


def _pairs(out: Path) -> list[dict[str, object]]:
    rows = []
    for shard in sorted((out / "shards").glob("pairs-*.jsonl.gz")):
        with gzip.open(shard, "rt") as fh:
            rows += [json.loads(line) for line in fh]
    return rows


def test_excluded_and_blind_set_names_are_refused(tmp_path: Path) -> None:
    refuse = _refuse(tmp_path)
    assert "held out" in (refuse.reason("Flask") or "")
    assert "blind set" in (refuse.reason("rich") or "")
    assert "blind set" in (refuse.reason_any(excluded.package_keys("go", "github.com/gorilla/mux/v2")) or "")
    assert "blind set" in (refuse.reason("", "https://github.com/gorilla/mux.git") or "")
    assert "polyglot" in (refuse.reason("zod") or "")
    assert refuse.reason("left-pad") is None
    base = excluded.load(tmp_path / "held-out-projects.md", tmp_path / "repos.json")
    assert base.reason("rich") is None  # only with_blind_set adds the blind set


def test_the_real_lists_refuse_held_out_and_blind_projects(shared_eval: Path) -> None:
    refuse = excluded.load_all()
    assert (
        refuse.reason("flask")
        and refuse.reason("rich")
        and refuse.reason("", "https://github.com/gorilla/mux")
    )


def test_a_run_writes_shards_and_a_manifest(
    setup: tuple[mining_run.Options, excluded.Excluded, list[sources.Unit]],
) -> None:
    opts, refuse, _ = setup
    assert mining_run.run(opts, refuse) == 0
    pairs = _pairs(opts.out)
    by_desc = {str(p["description"]): p for p in pairs}
    assert "Splits the text into lowercase words, dropping punctuation." in by_desc
    assert "Open opens the database file at path, creating it when missing." in by_desc
    js = by_desc["Debounces a function so it runs once after calls stop for the given delay."]
    assert set(mining_run.RECORD_FIELDS) <= set(js)
    assert (
        js["package"] == "debounce"
        and js["licence"] == "MIT"
        and js["registry"] == "npm"
        and js["path"] == "copy.js"
    )  # the first in walk order; index.js repeats it
    assert "/**" not in str(js["code"])
    assert not any(p["package"] in ("rich", "flask-fork") for p in pairs)
    assert not any("vendor/rich" in str(p["path"]) for p in pairs)  # a vendored copy of a refused project
    assert not list((opts.out / "shards").glob("*.tmp"))
    manifest = json.loads((opts.out / "manifest.json").read_text())
    status = {p["package"]: (p["status"], p["reason"]) for p in manifest["packages"]}
    assert status["rich"][0] == "refused" and "blind set" in status["rich"][1]
    assert status["flask-fork"][0] == "refused" and "held out" in status["flask-fork"][1]
    assert manifest["dedup"]["exact"] >= 1  # copy.js repeats index.js
    assert manifest["skipped_files"]["too large"] == 1
    assert manifest["counts_per_language"] == {"python": 2, "go": 1, "javascript": 1}
    assert manifest["pairs"] == len(pairs) and manifest["seed"] == opts.seed
    progress = json.loads((opts.out / "progress.json").read_text())
    assert progress["pairs_kept"] == len(pairs) and progress["units_done"] == 5


def test_a_resume_skips_the_packages_done(
    setup: tuple[mining_run.Options, excluded.Excluded, list[sources.Unit]],
) -> None:
    opts, refuse, _ = setup
    opts.max_units = 1
    assert mining_run.run(opts, refuse) == 0
    first = _pairs(opts.out)
    assert {p["package"] for p in first} == {"tokens"}
    opts.max_units = 0
    assert mining_run.run(opts, refuse) == 0
    log = (opts.out / "mining.log").read_text()
    assert log.count("done npm:tokens@1.0") == 1  # not mined twice
    second = _pairs(opts.out)
    assert len([p for p in second if p["package"] == "tokens"]) == len(first)
    assert {p["package"] for p in second} == {"tokens", "store", "debounce"}


def test_a_partial_shard_is_recovered_or_dropped(
    setup: tuple[mining_run.Options, excluded.Excluded, list[sources.Unit]],
) -> None:
    opts, refuse, _ = setup
    opts.max_units = 1
    assert mining_run.run(opts, refuse) == 0
    shard = opts.out / "shards" / "pairs-00000.jsonl.gz"
    shard.rename(shard.with_name(shard.name + ".tmp"))  # recorded, but the rename never happened
    (opts.out / "shards" / "pairs-00009.jsonl.gz.tmp").write_text("half")  # never recorded
    r = mining_run.Run(opts, refuse)
    r.close()
    assert shard.exists() and not list((opts.out / "shards").glob("*.tmp"))


def test_non_text_and_huge_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    from collections import Counter

    skipped: Counter[str] = Counter()
    (tmp_path / "a.py").write_bytes(b"x = 1\0\n")
    (tmp_path / "b.py").write_bytes(b"\xff\xfe bad")
    (tmp_path / "c.py").write_text("x = 1\n" * (sources.MAX_FILE_BYTES // 6 + 10))
    (tmp_path / "d.py").write_text("# Code generated by a tool. DO NOT EDIT.\nx = 1\n")
    for f in "abcd":
        assert sources.read_source(tmp_path / f"{f}.py", skipped) is None
    assert skipped == Counter({"binary": 1, "not utf-8": 1, "too large": 1, "generated": 1})


def test_the_cpython_standard_library_is_never_a_source() -> None:
    std = sources.stdlib_dir()
    assert sources.forbidden(std / "json" / "__init__.py")
    assert sources.forbidden(std / "site-packages" / "x" / "y.py") is None
    assert sources.forbidden(Path("/tmp/blind/x.py"))


def test_a_file_whose_parse_hangs_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from codesearch_lab.mining import extract

    def slow(rel: str, language: str, text: str) -> list[extract.Pair]:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # Python code, as the parser's repair loop is
            pass
        return []

    monkeypatch.setattr(extract, "file_pairs", slow)
    began = time.monotonic()
    with pytest.raises(mining_run.FileTimeout):
        mining_run.file_pairs_bounded("a.c", "c", "int x;", seconds=0.2)
    assert time.monotonic() - began < 2
