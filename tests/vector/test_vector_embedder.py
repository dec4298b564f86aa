"""Embedding backends with the bundled model: the ONNX export computes torch's vectors; ids keep models apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from codesearch.vector.embedder import Embedder, model_id_for

TEXTS = [
    "def call_with_retries(fn, attempts=5):\n    # exponential backoff between tries\n    ...",
    "how are retries with exponential backoff done",
    "x",
    "def long_function():\n" + "    total = total + compute_value(item)  # accumulate\n" * 80,  # > 256 tokens
]


def test_onnx_fp32_matches_torch(tmp_path: Path) -> None:
    torch_emb = Embedder("all-MiniLM-L6-v2", "torch", cache_dir=tmp_path)
    onnx_emb = Embedder("all-MiniLM-L6-v2", "onnx", cache_dir=tmp_path)
    assert torch_emb.load() and onnx_emb.load(), onnx_emb.unavailable_reason
    a = torch_emb.encode_documents(TEXTS)
    b = onnx_emb.encode_documents(TEXTS)
    assert a.shape == b.shape == (4, 384)
    # Same model, same vectors: they may share an index and a cache.
    assert np.min(np.sum(a * b, axis=1)) > 0.9999
    assert onnx_emb.model_id == torch_emb.model_id
    q = onnx_emb.encode_query(TEXTS[1])
    assert float(q @ b[0]) > float(q @ b[2])  # the query is nearer the retry code than a lone letter
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_quantised_and_static_backends_get_their_own_model_id() -> None:
    assert model_id_for("m", "onnx-int8") == "m#onnx-int8"
    assert model_id_for("m", "model2vec") == "m#model2vec"  # a model2vec model named as such
    assert model_id_for("all-MiniLM-L6-v2", "model2vec") == "all-MiniLM-L6-v2#model2vec-distilled-256"
    assert model_id_for("m", "onnx") == model_id_for("m", "torch") == "m"
