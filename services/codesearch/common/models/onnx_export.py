"""Exports a BERT-style sentence-transformers model to ONNX with torch.onnx (fp32), optionally quantised to int8.

optimum is not used: it pins transformers versions and breaks the installed stack. The exported graph returns
the last hidden state; pooling and normalisation happen in numpy (encoder.OnnxEncoder). A cross-encoder
(kind "classifier", rerank/onnx_model.py) returns its logits.
Exports are cached per model folder under `cache_dir`, keyed by the folder path and its weights' size and mtime,
so a changed model is exported again and an unchanged one is exported once per machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from codesearch.common.models.cache import ONNX_SUBDIR, cache_key
from codesearch.common.models.quiet import quiet_libraries

log = logging.getLogger(__name__)

ONNX_OPSET = 17  # supported by every onnxruntime since 1.14 and by the TorchScript exporter


def _export_fp32(model_path: str, dest: Path, kind: str) -> None:
    """Traces a model loaded here for the purpose: tracing changes the later outputs of the model it traces
    (a cross-encoder's torch logits moved by up to 0.46 afterwards, measured), so never trace one in service."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    if kind == "classifier":
        model = AutoModelForSequenceClassification.from_pretrained(model_path, local_files_only=True).eval()
        # A padded batch of pairs: traced on one unpadded input, the attention mask could be folded away.
        enc = tok(
            ["q", "a longer query"], ["t", "def f(x):\n    return x"], padding=True, return_tensors="pt"
        )
        output = "logits"
    else:
        model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
        enc = tok(["def example(x):\n    return x + 1"], return_tensors="pt")
        output = "hidden"
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    class Wrapper(torch.nn.Module):
        """Inputs by position: a dict argument is flattened in forward()'s signature order, which swaps
        token_type_ids and attention_mask (a cross-encoder's logits were off by 7, measured)."""

        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            out = self.m(**dict(zip(names, args, strict=True)))
            return out.logits if kind == "classifier" else out.last_hidden_state

    out_axes = {0: "batch"} if kind == "classifier" else {0: "batch", 1: "seq"}
    trace_to_onnx(Wrapper(), {n: enc[n] for n in names}, output, out_axes, dest)


def trace_to_onnx(
    module: Any, inputs: dict[str, Any], output: str, output_axes: dict[int, str], dest: Path
) -> None:
    """Traces module(*inputs) to `dest` (written beside it, then renamed), batch and sequence axes dynamic."""
    import torch

    tmp = dest.with_suffix(".tmp")
    with torch.no_grad(), quiet_libraries():  # tracer warnings are the exporter's, not the user's
        torch.onnx.export(
            module,
            tuple(inputs.values()),
            str(tmp),
            input_names=list(inputs),
            output_names=[output],
            dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in inputs}, output: output_axes},
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    os.replace(tmp, dest)


EXPORT_KINDS = ("encoder", "classifier")  # last hidden state (embeddings) / logits (cross-encoders)


def export_onnx(model_path: str, cache_dir: Path, quantize: bool = False, kind: str = "encoder") -> Path:
    """Path of the ONNX model for `model_path` (fp32, or int8 when `quantize`), exporting it on first use."""
    if kind not in EXPORT_KINDS:
        raise ValueError(f"unknown export kind {kind!r}")
    out_dir = cache_dir / (cache_key(model_path) + ("" if kind == "encoder" else f"-{kind}"))
    fp32 = out_dir / "model.fp32.onnx"
    if not fp32.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            with quiet_libraries(loads_transformers=True):
                _export_fp32(model_path, fp32, kind)
        except BaseException:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # leave no empty folder behind for a model that cannot be exported
            raise
        log.info("exported %s to %s", model_path, fp32)
    return quantized(fp32) if quantize else fp32


def quantized(fp32: Path) -> Path:
    """model.int8.onnx beside an fp32 export, made on first use: dynamic int8 with per-channel scales (per
    tensor moved a cross-encoder's logits by up to 7.4 and the embeddings' cosine to 0.895, measured)."""
    final = fp32.parent / "model.int8.onnx"
    if not final.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = fp32.parent / "model.int8.onnx.tmp"
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, final)
        log.info("quantised %s to %s", fp32, final)
    return final


def main(argv: list[str] | None = None) -> int:
    """Exports ahead of time (an image build), so servers with a read-only filesystem start at once."""
    import argparse

    from codesearch.common.models.lookup import resolve_model_path
    from codesearch.config import DEFAULT_EMBED_MODEL, Settings

    ap = argparse.ArgumentParser(description="export an embedding model to ONNX into the model cache")
    ap.add_argument("model", nargs="?", default=DEFAULT_EMBED_MODEL, help="a model name or path")
    ap.add_argument("--int8", action="store_true", help="also quantise to int8 (backend onnx-int8)")
    args = ap.parse_args(argv)
    path, looked = resolve_model_path(args.model)
    if not Path(path).is_dir():
        print(f"codesearch: model {args.model!r} not found; looked in: {'; '.join(looked)}")
        return 1
    print(export_onnx(path, Settings.from_env().model_cache / ONNX_SUBDIR, quantize=args.int8))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
