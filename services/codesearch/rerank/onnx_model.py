"""The reranker's cross-encoder run by onnxruntime (backends "onnx" and "onnx-int8"), with no torch at all.

The model folder is exported once with torch.onnx into the machine-wide model cache
(common/models/onnx_export.py, kind "classifier") and tokenised straight from its tokenizer.json. fp32
computes torch's logits (max difference 2e-6 over 20 pairs at 128 tokens, measured); it is ~2x faster per call
than torch on 2 cores (codesearch_lab/bench/rerank.py), and a process that only reranks never imports torch
(~5 s and ~400 MiB less at start).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from codesearch.common.models.cache import ONNX_SUBDIR


class UnsupportedModel(Exception):
    """The folder holds a model the onnx backends cannot run; the torch backend can."""


def num_labels(model_dir: Path) -> int:
    cfg = json.loads((model_dir / "config.json").read_text())
    return int(cfg.get("num_labels") or len(cfg.get("id2label") or {"0": 0}))


class OnnxCrossEncoder:
    """logits(pairs) for a one-logit cross-encoder folder; `count` gives exact token counts for trimming."""

    def __init__(
        self, model_dir: Path, max_length: int, threads: int, cache_dir: Path, quantize: bool
    ) -> None:
        from codesearch.common.models.onnx_export import export_onnx
        from codesearch.common.models.sessions import onnx_session
        from codesearch.common.models.tokenizer import fast_tokenizer, load_tokenizer, token_counter

        if not (model_dir / "config.json").is_file():
            raise UnsupportedModel(f"{model_dir} is not a model folder; the onnx backends need one")
        if num_labels(model_dir) != 1:
            raise UnsupportedModel("only one-logit cross-encoders run on the onnx backends; use torch")
        if not (model_dir / "tokenizer.json").is_file():
            raise UnsupportedModel(f"{model_dir} has no tokenizer.json; use the torch backend")
        path = export_onnx(str(model_dir), cache_dir / ONNX_SUBDIR, quantize=quantize, kind="classifier")
        self.session = onnx_session(path, threads)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.max_length = max_length
        self._tokenize = fast_tokenizer(str(model_dir), max_length)
        # Token counts without special tokens (rerank/text.py trims candidates with these).
        self.count = token_counter(load_tokenizer(str(model_dir)))

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int) -> np.ndarray:
        out = np.empty(len(pairs), dtype=np.float64)
        # Similar lengths in one batch pad less.
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))
        for s in range(0, len(order), batch_size):
            rows = order[s : s + batch_size]
            enc = self._tokenize([pairs[i] for i in rows])
            feed = {k: v for k, v in enc.items() if k in self.inputs}
            out[rows] = self.session.run(None, feed)[0].reshape(-1)
        return out
