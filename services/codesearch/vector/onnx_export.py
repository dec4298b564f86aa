"""Exports a BERT-style sentence-transformers model to ONNX with torch.onnx (fp32), optionally quantised to int8.

optimum is not used: it pins transformers versions and breaks the installed stack. The exported graph returns
the last hidden state; pooling and normalisation happen in numpy (embedder._OnnxBackend).
Exports are cached per model folder under `cache_dir`, keyed by the folder path and its weights' size and mtime,
so a changed model is exported again and an unchanged one is exported once per machine.
"""

from __future__ import annotations

import contextlib
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


def _export_fp32(model_path: str, dest: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    model = AutoModel.from_pretrained(model_path, local_files_only=True).eval()
    enc = tok(["def example(x):\n    return x + 1"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            return self.m(**dict(zip(names, args, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "seq"} for n in names}
    axes["hidden"] = {0: "batch", 1: "seq"}
    tmp = dest.with_suffix(".tmp")
    with torch.no_grad():
        torch.onnx.export(
            Wrapper(),
            tuple(enc[n] for n in names),
            str(tmp),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    os.replace(tmp, dest)


def export_onnx(model_path: str, cache_dir: Path, quantize: bool = False) -> Path:
    """Path of the ONNX model for `model_path` (fp32, or int8 when `quantize`), exporting it on first use."""
    out_dir = cache_dir / _cache_key(model_path)
    fp32 = out_dir / "model.fp32.onnx"
    if not fp32.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            _export_fp32(model_path, fp32)
        except BaseException:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # leave no empty folder behind for a model that cannot be exported
            raise
        log.info("exported %s to %s", model_path, fp32)
    if not quantize:
        return fp32
    final = out_dir / "model.int8.onnx"
    if not final.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = out_dir / "model.int8.onnx.tmp"
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, final)
        log.info("quantised %s to %s", model_path, final)
    return final


def main(argv: list[str] | None = None) -> int:
    """Exports ahead of time (an image build), so servers with a read-only filesystem start at once."""
    import argparse

    from codesearch.config import Settings
    from codesearch.vector.embedder import resolve_model_path

    ap = argparse.ArgumentParser(description="export an embedding model to ONNX into the model cache")
    ap.add_argument("model", nargs="?", default="all-MiniLM-L6-v2", help="a model name or path")
    ap.add_argument("--int8", action="store_true", help="also quantise to int8 (backend onnx-int8)")
    args = ap.parse_args(argv)
    path, looked = resolve_model_path(args.model)
    if not Path(path).is_dir():
        print(f"codesearch: model {args.model!r} not found; looked in: {'; '.join(looked)}")
        return 1
    print(export_onnx(path, Settings.from_env().model_cache / "onnx", quantize=args.int8))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
