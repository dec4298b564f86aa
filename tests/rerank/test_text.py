"""Candidate text trimming and lexical overlap: pure functions, no model."""

from __future__ import annotations

from codesearch.rerank import text as rtext


def test_short_text_is_kept_whole_with_header() -> None:
    out = rtext.candidate_text(5, "pkg/mod.py", ["Cls", "meth"], "def meth(self):\n    return 1", (), 128)
    assert out == "pkg/mod.py\nCls > meth\ndef meth(self):\n    return 1"


def test_trim_keeps_focus_lines_within_budget() -> None:
    lines = [f"line_{i} = compute_something_long({i})" for i in range(1, 201)]
    out = rtext.trim_lines("\n".join(lines), [120, 125], 60, rtext.approx_token_counts)
    kept = out.splitlines()
    assert "line_120 = compute_something_long(120)" in kept
    assert "line_125 = compute_something_long(125)" in kept
    assert "line_1 = compute_something_long(1)" not in kept
    assert kept[0] == rtext.GAP_MARKER and kept[-1] == rtext.GAP_MARKER
    assert sum(c + 1 for c in rtext.approx_token_counts([k for k in kept if k != rtext.GAP_MARKER])) <= 60


def test_trim_without_focus_takes_the_top() -> None:
    lines = [f"x{i} = {i} * 1000000" for i in range(100)]
    kept = rtext.trim_lines("\n".join(lines), [], 30, rtext.approx_token_counts).splitlines()
    assert kept[0] == "x0 = 0 * 1000000"
    assert kept[-1] == rtext.GAP_MARKER
    kept = kept[:-1]
    assert kept == lines[: len(kept)]
    assert 1 < len(kept) < 100


def test_lexical_overlap_splits_identifiers() -> None:
    assert rtext.lexical_overlap("parse the header", "def parseHeader(raw_bytes): ...") == 1.0
    assert rtext.lexical_overlap("parse the header", "def write_footer(): ...") == 0.0
    assert rtext.lexical_overlap("the of", "anything") == 0.0
