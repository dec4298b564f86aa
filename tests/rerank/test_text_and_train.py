"""Candidate text trimming, pair mining and the blend fit: pure functions, no model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from codesearch.rerank import blend_fit as rblend
from codesearch.rerank import pairs as rpairs
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


def test_mining_removes_the_query_sentence(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "class Box:\n"
        "    def open_lid(self, force):\n"
        '        """Open the lid of the box carefully. Raises if locked."""\n'
        "        if self.locked:\n"
        "            raise RuntimeError('locked')\n"
        "        self.lid = force\n"
        "\n"
        "def tiny():\n"
        '    """Too short."""\n'
        "    return 1\n"
    )
    defs = rpairs.mine(tmp_path)
    assert [(d.name, d.breadcrumb) for d in defs] == [("open_lid", ["Box"])]
    d = defs[0]
    assert d.sentence == "Open the lid of the box carefully"
    assert "carefully" not in d.code and "Raises if locked." in d.code
    assert "raise RuntimeError('locked')" in d.code
    assert "Open the lid of the box carefully." in d.full_code  # as written, for the share read whole


def test_about_half_the_definitions_keep_their_sentence() -> None:
    defs = [rpairs.Definition(f"pkg/m{i % 7}.py", [], f"f{i}", "s", "code", "full") for i in range(400)]
    kept = sum(rpairs.keeps_sentence(d) for d in defs)
    assert abs(kept / len(defs) - rpairs.KEEP_SENTENCE_SHARE) < 0.1
    assert [rpairs.keeps_sentence(d) for d in defs] == [rpairs.keeps_sentence(d) for d in defs]  # stable


def test_split_is_by_file_and_stable() -> None:
    splits = {rpairs.split_of(f"pkg/m{i}.py") for i in range(200)}
    assert splits == {"train", "blend", "test"}
    assert rpairs.split_of("a/b.py") == rpairs.split_of("a/b.py")


def test_logistic_blend_and_mrr() -> None:
    rng = np.random.default_rng(0)
    groups, size = 200, 5
    y = np.tile([1.0] + [0.0] * (size - 1), groups)
    useful = y * 2.0 + rng.normal(size=len(y))
    noise = rng.normal(size=len(y))
    w, b = rblend.fit_logistic(np.stack([useful, noise], axis=1), y)
    assert w[0] > 1.0 and abs(w[1]) < 0.3
    p = 1 / (1 + np.exp(-(np.stack([useful, noise], axis=1) @ w + b)))
    assert abs(p.mean() - y.mean()) < 0.02  # calibrated on its training data
    assert rblend.mrr(useful, size) > rblend.mrr(noise, size)
    assert rblend.mrr(y, size) == 1.0
    assert rblend.mrr(np.zeros_like(y), size) == 1.0 / size  # ties count against the positive


def test_fused_order_is_reciprocal_rank_fusion_within_each_group() -> None:
    rng = np.random.default_rng(3)
    size, k = 5, 60.0
    a, b = rng.random(4 * size), rng.random(4 * size)

    def ranks(x: np.ndarray) -> np.ndarray:  # 1-based, within each group of `size` rows
        g = x.reshape(-1, size)
        return (np.argsort(np.argsort(-g, axis=1, kind="stable"), axis=1) + 1).reshape(-1)

    assert np.allclose(rblend.fused(a, b, size, k), 1 / (k + ranks(a)) + 1 / (k + ranks(b)))
