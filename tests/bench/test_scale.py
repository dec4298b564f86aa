"""`codesearch bench scale` end to end on a tiny corpus at sizes 1 and 2: real `codesearch serve` processes index
hard-linked copies, and the printed table and JSON rows hold measured figures that grow with the size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from codesearch.bench import scale
from codesearch.cli.main import main

MODULE = '''"""Reads settings files and retries the connection."""


def parse_config(path):
    """Parses the settings file at path into a dictionary."""
    with open(path) as f:
        return dict(line.split("=", 1) for line in f if "=" in line)


def connect(host, retries=3):
    for attempt in range(retries):
        settings = parse_config("/etc/{host}.conf")
        if settings.get("ready") == "yes":
            return attempt
    raise ConnectionError("no answer from the remote host")
'''

QUERIES = [
    {"klass": "definition", "query": "parse_config"},
    {"klass": "definition", "query": "where is connect defined"},
    {"klass": "references", "query": "who calls parse_config"},
    {"klass": "exact_match", "query": '"no answer from the remote host"'},
    {"klass": "concept", "query": "how does the client retry a connection"},
    {"klass": "impact", "query": "what breaks if parse_config changes"},
    {"klass": "unknown_class", "query": "left out: not one of the five intents"},
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for i in range(4):
        pkg = root / f"pkg{i}"
        pkg.mkdir(parents=True)
        (pkg / "settings.py").write_text(MODULE.replace("parse_config", f"parse_config_{i}"))
        (pkg / "client.py").write_text(MODULE)
    return root


def test_scale_bench_prints_measured_rows_that_grow_with_the_size(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    out_json = tmp_path / "rows.json"
    argv = ["bench", "scale", "--sizes", "2,1", "--corpus", str(corpus), "--queries", str(queries)]
    argv += ["--work-dir", str(tmp_path / "work"), "--json", str(out_json)]
    assert main(argv) == 0
    printed = capsys.readouterr().out

    one, two = json.loads(out_json.read_text())
    assert (one["size"], two["size"]) == (1, 2)  # sorted; the smallest is the baseline
    assert (one["files"], two["files"]) == (8, 16)
    assert one["chunks"] >= 8 and two["chunks"] == 2 * one["chunks"]  # identical copies chunk identically
    assert 0 < one["index_s"] < 120 and two["index_s"] > 0
    for leg in scale.LEGS:
        # Each copy's index is its own on disk: twice the copies, about twice the bytes.
        assert one["disk_bytes"][leg] > 0, leg
        assert 1.5 < two["disk_bytes"][leg] / one["disk_bytes"][leg] < 2.5, (leg, one, two)
    for row in (one, two):
        assert 50e6 < row["rss_bytes"] <= row["peak_rss_bytes"] < 8 * 2**30
        assert row["errors"] == {}
        assert set(row["latency"]) == set(scale.INTENTS.values())
        for intent, lat in row["latency"].items():
            assert lat["calls"] == (2 if intent == "definition" else 1), intent
            assert 0 < lat["p50_ms"] <= lat["p99_ms"] < scale.SEARCH_TIMEOUT_S * 1000

    table = [line for line in printed.splitlines() if line.startswith("| ")]
    header = next(line for line in table if line.startswith("| size |"))
    assert header.startswith(
        "| size | files | chunks | index s | bm25 MB | trigram MB | vector MB | graph MB"
    )
    assert "concept p50 / p99 ms" in header
    # Live rows while it runs, then the final table: the 1x row is its own baseline, the 2x row is against it.
    assert table[-2].startswith("| 1x | 8 (1.00x) |")
    assert table[-1].startswith("| 2x | 16 (2.00x) |")
    assert f"{two['chunks']:,} (2.00x)" in table[-1]
    assert "ratios against the 1x row of this run" in printed
    assert not list((tmp_path / "work").glob("home-*")), "each size's data directory is removed"


@pytest.mark.parametrize("text", ["", "0,1", "1,x", "-2"])
def test_bad_sizes_are_a_plain_cli_error(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = ["--corpus", str(tmp_path), "--queries", str(tmp_path / "q.jsonl")]
    assert main(["bench", "scale", "--sizes", text, *given]) != 0
    assert "--sizes takes positive whole numbers" in capsys.readouterr().err


def test_a_missing_corpus_or_query_file_is_a_plain_cli_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Neither has a default (the evaluation folder is not part of the package): argparse names what is missing.
    with pytest.raises(SystemExit) as e:
        main(["bench", "scale"])
    assert e.value.code == 2
    assert "the following arguments are required: --corpus, --queries" in capsys.readouterr().err
    corpus = ["--corpus", str(tmp_path)]
    assert main(["bench", "scale", *corpus, "--queries", str(tmp_path / "none.jsonl")]) != 0
    assert "query file" in capsys.readouterr().err
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"klass": "concept", "query": "how"}) + "\n")
    assert main(["bench", "scale", "--queries", str(queries), "--corpus", str(tmp_path / "nowhere")]) != 0
    assert "is not a directory" in capsys.readouterr().err
    queries.write_text("not json\n")
    assert main(["bench", "scale", *corpus, "--queries", str(queries)]) != 0
    assert "not a query line" in capsys.readouterr().err
