"""The native trigram index on a real directory: search kinds, incremental builds, damage, GIL release."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codesearch._native import GrepResult, TrigramIndex

from tests.native.gil_probe import assert_releases_gil

FILES: list[tuple[str, bytes]] = [
    (
        "pkg/cache.py",
        b"import functools\n\n\ndef get_cache(key):\n    return _CACHE.get(key)\n\n\n"
        b"class LRUCache:\n    def clear_cache(self):\n        raise KeyError('cache')\n",
    ),
    (
        "pkg/http.py",
        b"class HTTPResponse:\r\n    def parse(self, data):\r\n        raise ValueError(data)\r\n",
    ),
    ("pkg/util.py", b"def helper():\n    x = get_cache(1)  # get_cache twice: get_cache\n    return x\n"),
    ("docs/notes.txt", "naïve café — Cache notes\nno newline at end".encode()),
]


def lines_of(result: GrepResult) -> set[tuple[str, int]]:
    return {(m.path, m.line) for m in result.matches}


def naive(files: list[tuple[str, bytes]], pattern: str, flags: int = 0) -> set[tuple[str, int]]:
    rx = re.compile(pattern, flags)
    hits = set()
    for path, data in files:
        for no, line in enumerate(data.decode("utf-8").split("\n"), start=1):
            if rx.search(line):
                hits.add((path, no))
    return hits


@pytest.fixture
def index(tmp_path: Path) -> TrigramIndex:
    d = tmp_path / "idx"
    d.mkdir()
    return TrigramIndex.build(str(d), FILES)


def test_accessors(index: TrigramIndex) -> None:
    assert index.num_files() == 4
    assert index.paths() == [p for p, _ in FILES]
    assert index.content("pkg/http.py") == FILES[1][1]
    assert index.content("missing.py") is None
    assert index.postings_bytes() > 0
    assert index.content_bytes() >= sum(len(d) for _, d in FILES)


def test_literal_case_sensitive(index: TrigramIndex) -> None:
    r = index.search("get_cache", False, True, 100)
    assert lines_of(r) == {("pkg/cache.py", 4), ("pkg/util.py", 2)}
    assert not r.full_scan
    assert r.candidate_files == 2
    assert r.total_files == 4
    by_path = {m.path: m for m in r.matches}
    assert by_path["pkg/util.py"].match_count == 3
    assert by_path["pkg/cache.py"].definition_line
    assert by_path["pkg/cache.py"].whole_word
    assert by_path["pkg/cache.py"].text == "def get_cache(key):"
    # The definition outranks the triple use.
    assert r.matches[0].path == "pkg/cache.py"


def test_literal_case_insensitive(index: TrigramIndex) -> None:
    r = index.search("CACHE", False, False, 100)
    assert lines_of(r) == naive(FILES, "cache", re.IGNORECASE)
    assert index.search("CACHE", False, True, 100).matches[0].text == "    return _CACHE.get(key)"
    # Non-ASCII letters fold too, and a CRLF line comes back without its "\r".
    assert lines_of(index.search("CAFÉ", False, False, 10)) == {("docs/notes.txt", 1)}
    assert index.search("httpresponse", False, False, 10).matches[0].text == "class HTTPResponse:"


def test_regex(index: TrigramIndex) -> None:
    for pattern in [r"raise \w+Error\(", r"def \w+_cache", r"^class ", r"(parse|helper)\(", r"end$"]:
        r = index.search(pattern, True, True, 100)
        assert lines_of(r) == naive(FILES, pattern, re.MULTILINE), pattern
    r = index.search(r"def \w+_CACHE", True, False, 100)
    assert lines_of(r) == {("pkg/cache.py", 4), ("pkg/cache.py", 9)}
    assert not r.full_scan
    assert r.candidate_files < r.total_files


def test_full_scan_flag(index: TrigramIndex) -> None:
    r = index.search("x", False, True, 100)
    assert r.full_scan
    assert r.candidate_files == 4
    assert lines_of(r) == naive(FILES, "x")
    assert index.search(r"\w+", True, True, 5).full_scan
    assert len(index.search(r"\w+", True, True, 5).matches) == 5


def test_limit_and_order_are_deterministic(index: TrigramIndex) -> None:
    full = index.search("e", False, False, 1000).matches
    keys = [(-m.score, m.path, m.line) for m in full]
    assert keys == sorted(keys)
    top = index.search("e", False, False, 3).matches
    assert [(m.path, m.line) for m in top] == [(m.path, m.line) for m in full[:3]]
    assert index.search("e", False, False, 0).matches == []


def test_allowed(index: TrigramIndex) -> None:
    r = index.search("get_cache", False, True, 100, allowed=[2])
    assert lines_of(r) == {("pkg/util.py", 2)}
    assert r.total_files == 1
    with pytest.raises(ValueError, match="out of range"):
        index.search("get_cache", False, True, 100, allowed=[17])


def test_invalid_regex_reports_position(index: TrigramIndex) -> None:
    with pytest.raises(ValueError, match="position 4: unclosed group"):
        index.search("def (\\w+", True, True, 10)
    with pytest.raises(ValueError, match="position"):
        index.search("a{2,1}", True, True, 10)
    with pytest.raises(ValueError, match="size limit"):
        index.search("(?:a{1000}){1000}", True, True, 10)
    with pytest.raises(ValueError):
        index.search("", False, True, 10)


def test_incremental_build(tmp_path: Path, index: TrigramIndex) -> None:
    (tmp_path / "gen2").mkdir()
    new = [
        ("pkg/http.py", b"class HTTPRequest:\n    pass\n"),
        ("pkg/new.py", b"def get_cache_v2():\n    pass\n"),
    ]
    inc = TrigramIndex.build(str(tmp_path / "gen2"), new, base=index, drop=["pkg/util.py"])
    assert sorted(inc.paths()) == ["docs/notes.txt", "pkg/cache.py", "pkg/http.py", "pkg/new.py"]
    assert inc.content("pkg/http.py") == new[0][1]
    assert inc.content("pkg/cache.py") == FILES[0][1]
    assert lines_of(inc.search("get_cache", False, True, 100)) == {("pkg/cache.py", 4), ("pkg/new.py", 1)}
    assert inc.search("HTTPResponse", False, True, 10).matches == []
    # The base generation is untouched and reopens as it was.
    again = TrigramIndex.open(str(index_dir(tmp_path)))
    assert lines_of(again.search("get_cache", False, True, 100)) == {("pkg/cache.py", 4), ("pkg/util.py", 2)}


def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "idx"


def test_build_refuses_a_non_empty_dir_and_duplicates(tmp_path: Path, index: TrigramIndex) -> None:
    with pytest.raises(ValueError, match="not empty"):
        TrigramIndex.build(str(index_dir(tmp_path)), FILES)
    (tmp_path / "dup").mkdir()
    with pytest.raises(ValueError, match="duplicate"):
        TrigramIndex.build(str(tmp_path / "dup"), [("a", b"x"), ("a", b"y")])
    with pytest.raises(OSError):
        TrigramIndex.build(str(tmp_path / "missing"), FILES)


def test_damaged_index_gives_a_clean_error(tmp_path: Path, index: TrigramIndex) -> None:
    d = index_dir(tmp_path)
    postings = (d / "postings.bin").read_bytes()
    (d / "postings.bin").write_bytes(postings[: len(postings) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        TrigramIndex.open(str(d))
    (d / "postings.bin").write_bytes(b"XXXXXXXX" + postings[8:])
    with pytest.raises(ValueError, match="magic"):
        TrigramIndex.open(str(d))
    (d / "postings.bin").write_bytes(postings)
    content = bytearray((d / "content.bin").read_bytes())
    content[12] ^= 0xFF  # the file count
    (d / "content.bin").write_bytes(bytes(content))
    with pytest.raises(ValueError, match="corrupt"):
        TrigramIndex.open(str(d))
    (d / "content.bin").unlink()
    with pytest.raises(FileNotFoundError):
        TrigramIndex.open(str(d))


def test_search_releases_the_gil(tmp_path: Path) -> None:
    body = "".join(
        f"def function_{i}(self, argument_{i % 7}, value={i}):  # c {i}\n" for i in range(100)
    ).encode()
    d = tmp_path / "big"
    d.mkdir()
    index = TrigramIndex.build(str(d), [(f"pkg/mod{i}.py", body) for i in range(3000)])
    assert_releases_gil(lambda: index.search(r"\w+", True, False, 10))
