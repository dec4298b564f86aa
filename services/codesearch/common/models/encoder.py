"""A sentence-transformers bi-encoder run by onnxruntime: unit vectors for texts, with no torch import.

Used by the vector leg (its transformer tier) and by the reranker's blend (the bi-encoder cosine).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from codesearch.common.models.onnx_export import export_onnx
from codesearch.common.models.sessions import onnx_session
from codesearch.common.models.tokenizer import fast_tokenizer

MAX_SEQ_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer only costs time


class UnsupportedModel(Exception):
    """The model cannot run on the onnx backends (the message says why); the torch backend may run it."""


def pooling_mode(path: str) -> str:
    """How a sentence-transformers folder pools token vectors: "mean" or "cls" (others need torch)."""
    cfg = Path(path) / "1_Pooling" / "config.json"
    if not cfg.is_file():
        return "mean"  # a plain transformers folder: sentence-transformers itself defaults to mean pooling
    conf = json.loads(cfg.read_text())
    modes = [k for k, v in conf.items() if k.startswith("pooling_mode_") and v]
    if modes == ["pooling_mode_mean_tokens"]:
        return "mean"
    if modes == ["pooling_mode_cls_token"]:
        return "cls"
    raise UnsupportedModel(f"pooling {modes} is not supported by the onnx backends; use the torch backend")


class OnnxEncoder:
    """BERT exported with torch.onnx (fp32, or int8-quantised by onnxruntime); pooling + L2 norm in numpy.

    fp32 gives the torch backend's vectors (cosine 1.0000, measured) at a fraction of its per-call overhead,
    which is what a one-query embedding pays: 19-27 ms with torch vs 6.6 ms here on 2 cores (vector/bench.py).
    """

    def __init__(self, path: str, threads: int, cache_dir: Path, quantize: bool, max_tokens: int = 0) -> None:
        try:
            import onnxruntime  # noqa: F401  (only whether it is installed)
        except ImportError as e:
            raise UnsupportedModel(
                "the onnx backends need the onnxruntime package (pip install onnxruntime)"
            ) from e

        self.pooling = pooling_mode(path)
        self.session = onnx_session(export_onnx(path, cache_dir, quantize=quantize), threads)
        self.max_tokens = max_tokens or min(_configured_max_tokens(path), MAX_SEQ_TOKENS)
        self.tokenize = fast_tokenizer(path, self.max_tokens)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dims = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), np.float32)
        # Similar lengths in one batch pad less (sentence-transformers does the same).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for s in range(0, len(order), batch_size):
            rows = order[s : s + batch_size]
            enc = self.tokenize([texts[i] for i in rows])
            feed = {k: v for k, v in enc.items() if k in self.inputs}
            hidden = self.session.run(None, feed)[0]
            if self.pooling == "cls":
                pooled = hidden[:, 0, :]
            else:
                mask = enc["attention_mask"][..., None].astype(np.float32)
                pooled = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def _configured_max_tokens(path: str) -> int:
    cfg = Path(path) / "sentence_bert_config.json"
    if cfg.is_file():
        return int(json.loads(cfg.read_text()).get("max_seq_length") or MAX_SEQ_TOKENS)
    return MAX_SEQ_TOKENS
