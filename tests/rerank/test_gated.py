"""The gated cross-encoder: it starts as the bi-encoder, and a gated folder exports to ONNX with the same
scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from codesearch.common.models.lookup import model_path
from codesearch.rerank import gated
from codesearch.rerank.model import BLEND_FILE, Blend, Candidate, Reranker

pytestmark = pytest.mark.model

BASE = model_path("all-MiniLM-L6-v2")
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


def test_a_gated_folder_scores_on_onnx_like_torch(tmp_path: Path) -> None:
    """A gated folder as rerank/model.py loads it (the module, gated.json, blend.json): the onnx backend's logits
    are torch's, and the blend's probabilities lie in [0, 1]."""
    held_out = [(TOY_TRAIN[3][0], TOY_TRAIN[3][1]), (TOY_TRAIN[3][0], TOY_TRAIN[3][2])]
    folder = tmp_path / "model"
    folder.mkdir()
    gated.save(gated.new_module(BASE), BASE, folder, 64)
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
    assert np.all((probs >= 0) & (probs <= 1))


def test_gated_folder_without_blend_is_refused(tmp_path: Path) -> None:
    gated.save(gated.new_module(BASE), BASE, tmp_path, 64)
    with pytest.raises(ValueError, match="without its blend.json"):
        Reranker(str(tmp_path))
