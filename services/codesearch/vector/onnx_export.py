"""Exports a BERT-style sentence-transformers model to ONNX with torch.onnx, then quantises it to int8.

optimum is not used: it pins transformers versions and breaks the installed stack. The exported graph returns
the last hidden state; pooling and normalisation happen in numpy (embedder._OnnxInt8Backend).
The result is cached per model folder under `cache_dir`, keyed by the folder path and its weights' size and mtime.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

ONNX_OPSET = 17  # supported by every onnxruntime since 1.14 and by the TorchScript exporter


def _cache_key(model_path: str) -> str:
    p = Path(model_path)
    parts = [str(p.resolve())]
    for w in sorted(p.glob("*.safetensors")) + sorted(p.glob("*.bin")):
        st = w.stat()
        parts.append(f"{w.name}:{st.st_size}:{int(st.st_mtime)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def export_int8(model_path: str, cache_dir: Path) -> Path:
    """Path of the int8 ONNX model for `model_path`, exporting and quantising it on first use."""
    out_dir = cache_dir / _cache_key(model_path)
    final = out_dir / "model.int8.onnx"
    if final.is_file():
        return final
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
    enc = tok(["def example(x):\n    return x + 1"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
    fp32 = out_dir / "model.fp32.onnx"

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            return self.m(**dict(zip(names, args, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes["hidden"] = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(
            Wrapper(),
            tuple(enc[n] for n in names),
            str(fp32),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    tmp = out_dir / "model.int8.onnx.tmp"
    quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
    os.replace(tmp, final)
    fp32.unlink(missing_ok=True)
    log.info("exported %s to %s (int8)", model_path, final)
    return final
