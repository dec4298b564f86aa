"""The gated cross-encoder: it starts as the bi-encoder, trains, exports to ONNX with the same scores, and
`codesearch reranker train` produces a folder the service loads."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from codesearch.common.models.lookup import model_path
from codesearch.config import Settings
from codesearch.rerank import finetune as rfinetune
from codesearch.rerank import gated
from codesearch.rerank import train as rtrain
from codesearch.rerank.model import BLEND_FILE, Blend, Candidate, Reranker

pytestmark = pytest.mark.model

BASE = model_path(rfinetune.BASE_MODEL)
PAIRS = [
    ("sort numbers in ascending order", "def sort_numbers(values):\n    return sorted(values)"),
    ("sort numbers in ascending order", "Roast the peppers until the skins blacken, then peel them."),
    (
        "open a socket to a host",
        "import socket\n\ndef connect(host, port):\n    return socket.create_connection((host, port))",
    ),
]
TOY_TRAIN = [
    (
        "function that adds two numbers",
        "def add(a, b):\n    return a + b",
        "def sub(a, b):\n    return a - b",
    ),
    ("reverse a list", "def reverse(xs):\n    return xs[::-1]", "def first(xs):\n    return xs[0]"),
    (
        "check if a number is even",
        "def is_even(n):\n    return n % 2 == 0",
        "def is_neg(n):\n    return n < 0",
    ),
    (
        "count words in text",
        "def count_words(t):\n    return len(t.split())",
        "def upper(t):\n    return t.upper()",
    ),
]


def test_shut_gate_is_exactly_the_bi_encoder() -> None:
    from sentence_transformers import SentenceTransformer

    module = gated.new_module(BASE, gate=-1e4).eval()
    scores = gated.torch_scores(module, gated.PairEncoder(Path(BASE), 256).encode(PAIRS))
    bi = SentenceTransformer(BASE, device="cpu", local_files_only=True)
    emb = bi.encode([x for pair in PAIRS for x in pair], normalize_embeddings=True)
    expected = (emb[0::2] * emb[1::2]).sum(axis=1)
    np.testing.assert_allclose(scores, expected, atol=1e-4)


def test_pair_encoder_segments_positions_and_budget() -> None:
    enc = gated.PairEncoder(Path(BASE), max_length=16, query_max_tokens=6)
    batch = enc.encode([("a b c d e f g h", "x " * 40), ("q", "y")])
    ids, pos, seg = batch["input_ids"], batch["position_ids"], batch["segment_ids"]
    assert ids.shape[1] == 16  # the longer pair fills the budget exactly
    row = seg[0].tolist()
    assert row.count(0) == 6 and row.count(1) == 10  # query cut to 6 tokens, candidate to the rest
    assert pos[0, 6] == 0  # the candidate's positions restart at its own [CLS]
    cls, sep = enc.tok.token_to_id("[CLS]"), enc.tok.token_to_id("[SEP]")
    assert ids[0, 0] == cls and ids[0, 5] == sep and ids[0, 6] == cls and ids[0, 15] == sep
    assert seg[1].tolist()[-1] == gated.PAD_SEGMENT  # the short pair is padded


def _toy_batches(step: int) -> list[tuple[str, list[str]]]:
    q, right, wrong = TOY_TRAIN[step % 3]
    return [(q, [right, wrong, PAIRS[1][1]])]


def test_training_moves_the_margin_and_onnx_scores_like_torch(tmp_path: Path) -> None:
    module = gated.new_module(BASE)
    encoder = gated.PairEncoder(Path(BASE), 64)
    seen = [(TOY_TRAIN[0][0], TOY_TRAIN[0][1]), (TOY_TRAIN[0][0], TOY_TRAIN[0][2])]
    held_out = [(TOY_TRAIN[3][0], TOY_TRAIN[3][1]), (TOY_TRAIN[3][0], TOY_TRAIN[3][2])]
    before = gated.torch_scores(module.eval(), encoder.encode(seen))
    gate_before = float(module.gate)
    steps = rfinetune.train_gated(module, encoder, _toy_batches, deadline=math.inf, max_steps=12)
    assert steps == 12
    after = gated.torch_scores(module, encoder.encode(seen))
    assert after[0] - after[1] > before[0] - before[1]  # a trained pair's right answer pulled further ahead
    assert float(module.gate) != gate_before  # the gate is trained too
    right, wrong = gated.torch_scores(module, encoder.encode(held_out))
    assert right > wrong

    folder = tmp_path / "model"
    folder.mkdir()
    gated.save(module, BASE, folder, 64)
    Blend(weights={"ce": 8.0}, bias=-4.0, extra={"max_length": 64}).save(folder / BLEND_FILE)
    cands = [Candidate(t, "m.py", ["Util"]) for _, t in held_out]
    on_torch = Reranker(str(folder), backend="torch")
    on_onnx = Reranker(str(folder), cache_dirs=[tmp_path / "cache"])
    assert (on_torch.backend, on_onnx.backend) == ("torch", "onnx")
    texts = on_torch.texts(held_out[0][0], cands)
    assert on_onnx.texts(held_out[0][0], cands) == texts
    np.testing.assert_allclose(
        on_onnx.logits(held_out[0][0], texts), on_torch.logits(held_out[0][0], texts), atol=1e-4
    )
    probs = on_onnx.score(held_out[0][0], cands)
    assert np.all((probs >= 0) & (probs <= 1)) and probs[0] > probs[1]


def test_gated_folder_without_blend_is_refused(tmp_path: Path) -> None:
    gated.save(gated.new_module(BASE), BASE, tmp_path, 64)
    with pytest.raises(ValueError, match="without its blend.json"):
        Reranker(str(tmp_path))


WORDS = [
    "parse",
    "render",
    "cache",
    "socket",
    "buffer",
    "token",
    "header",
    "cookie",
    "stream",
    "archive",
    "thread",
    "signal",
    "queue",
    "timer",
    "digest",
    "cipher",
    "locale",
    "calendar",
    "decimal",
    "fraction",
    "matrix",
    "vector",
    "graph",
    "node",
    "edge",
    "path",
    "glob",
    "pickle",
]


def _synthetic_repo(root: Path, files: int = 24, per_file: int = 5) -> None:
    """Documented functions whose docstring words also name their body's identifiers (a learnable link)."""
    rng = random.Random(7)
    for f in range(files):
        lines = []
        for k in range(per_file):
            a, b, c = rng.sample(WORDS, 3)
            lines += [
                f"def {a}_{b}_{f}_{k}(items):",
                f'    """Compute the {a} of every {b} using the {c} table. More words follow."""',
                f"    {c}_table = build_{c}(items)",
                f"    return [{a}_of(x, {c}_table) for x in items if is_{b}(x)]",
                "",
            ]
        (root / f"mod_{f}.py").write_text("\n".join(lines))


def test_train_end_to_end_saves_a_model_the_reranker_loads(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _synthetic_repo(repo)
    monkeypatch.setattr(rtrain, "MAX_LENGTH", 64)  # a quick test: shorter pairs
    monkeypatch.setattr(rtrain, "MIN_CE_TRAIN_S", 0.0)
    monkeypatch.setattr(rtrain, "MAX_TEST_GROUPS", 8)  # scoring the held-out groups is most of the time
    monkeypatch.setattr(rtrain, "MAX_BLEND_GROUPS", 8)
    out = tmp_path / "trained"
    report = rtrain.train(settings, "synthetic", budget_minutes=30, out_dir=out, path=repo, max_steps=2)
    assert report.steps == 2 and 0 < report.test_groups <= 8
    for scorer in (
        "first-stage BM25",
        "bi-encoder cosine",
        "fused BM25 + bi-encoder (RRF)",
        "cross-encoder alone",
    ):
        assert 0.0 < report.mrr[scorer] <= 1.0
    assert gated.is_gated(out) and (out / BLEND_FILE).is_file() and (out / "train_report.json").is_file()
    rr = Reranker(str(out), cache_dirs=[tmp_path / "cache"])
    probs = rr.score("compute the digest of every token", [Candidate("def f():\n    pass", "a.py")])
    assert 0.0 <= probs[0] <= 1.0
