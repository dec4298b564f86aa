"""Reranker latency: 20 / 50 pairs at 128 / 256 tokens, fp32 torch by batch size vs ONNX Runtime fp32 and int8.

    python -m codesearch.rerank.bench [--model DIR] [--threads 1] [--reps 5] [--no-onnx]

Latency does not depend on the weights, so without --model a fresh cross-encoder from the bundled MiniLM is
timed. Candidates are real code (this package's source) filling the whole token budget: the worst case.
The ONNX path needs `onnxruntime` and `onnx` (pip install onnxruntime onnx); it is measured, not served.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from codesearch.rerank import text as rtext
from codesearch.rerank.model import configure_threads

QUERY = "parse the header of an email message and return its fields"
OPSET = 17  # opset every onnxruntime from 1.15 runs, with the fused attention ops quantize_dynamic handles


def candidates(n: int, max_length: int, tokenizer: object) -> list[str]:
    """n distinct code windows from this package's sources, each trimmed to fill the pair budget."""
    src = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("*.py")))
    lines = src.splitlines()
    count = rtext.tokenizer_counter(tokenizer)
    q_tokens = count([QUERY])[0]
    step = max(1, len(lines) // n)
    return [
        rtext.candidate_text(
            q_tokens, "pkg/mod.py", ["Cls"], "\n".join(lines[i * step :]), (), max_length, count
        )
        for i in range(n)
    ]


def timeit(fn: Callable[[], object], reps: int) -> float:
    fn()  # warm-up: first call allocates and picks kernels
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def torch_scorer(model: object, tokenizer: object, pairs: list[tuple[str, str]], max_length: int, batch: int):  # type: ignore[no-untyped-def]
    import torch

    def run() -> np.ndarray:
        out = []
        with torch.inference_mode():
            for k in range(0, len(pairs), batch):
                chunk = pairs[k : k + batch]
                enc = tokenizer(  # type: ignore[operator]
                    [q for q, _ in chunk],
                    [t for _, t in chunk],
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                )
                out.append(model(**enc).logits.view(-1).numpy())  # type: ignore[operator]
        return np.concatenate(out)

    return run


def export_onnx(model: object, tokenizer: object, out_dir: Path) -> dict[str, Path]:
    """{"onnx fp32": ..., "onnx int8": ...}: the model exported with torch.onnx, and quantised per channel."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Traced on a padded batch: traced on one unpadded pair, the attention mask can be folded away.
    enc = tokenizer(
        ["q", "a longer query"], ["t", "def f(x):\n    return x"], padding=True, return_tensors="pt"
    )  # type: ignore[operator]
    names = list(enc.keys())
    fp32 = out_dir / "model.onnx"

    class Positional(torch.nn.Module):
        """Inputs by position in `names` order: a dict argument is flattened in forward()'s signature order,
        which names token_type_ids and attention_mask the wrong way round (logits off by 7, measured)."""

        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            return self.m(**dict(zip(names, args, strict=True))).logits  # type: ignore[operator]

    axes = {n: {0: "batch", 1: "seq"} for n in names}
    torch.onnx.export(
        Positional(),
        tuple(enc[n] for n in names),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**axes, "logits": {0: "batch"}},
        opset_version=OPSET,
        dynamo=False,
    )
    int8 = out_dir / "model.int8.onnx"
    # Per-channel scales: per-tensor int8 moved this model's logits by up to 7.4 (measured).
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return {"onnx fp32": fp32, "onnx int8": int8}


def onnx_scorer(path: Path, threads: int, tokenizer: object, pairs: list[tuple[str, str]], max_length: int):  # type: ignore[no-untyped-def]
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}

    def run() -> np.ndarray:
        enc = tokenizer(  # type: ignore[operator]
            [q for q, _ in pairs],
            [t for _, t in pairs],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="np",
        )
        feed = {k: v.astype(np.int64) for k, v in enc.items() if k in wanted}
        return sess.run(["logits"], feed)[0].reshape(-1)

    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="")
    ap.add_argument(
        "--threads", type=int, default=0, help="torch / onnxruntime intra-op threads (0: default)"
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pairs", default="20,50")
    ap.add_argument("--lengths", default="128,256")
    ap.add_argument("--batches", default="8,16,32,64")
    ap.add_argument("--no-onnx", action="store_true")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    threads = configure_threads(a.threads)
    from codesearch.rerank.train import new_cross_encoder

    if a.model:
        from sentence_transformers import CrossEncoder

        ce = CrossEncoder(a.model, local_files_only=True)
    else:
        ce = new_cross_encoder(512, "cpu")
    model, tok = ce.model.eval(), ce.tokenizer
    onnx_paths: dict[str, Path] = {}
    tmp = tempfile.TemporaryDirectory()
    if not a.no_onnx:
        try:
            onnx_paths = export_onnx(model, tok, Path(tmp.name))
        except Exception as e:  # a missing package or an exporter change: report and time torch alone
            print(f"ONNX export skipped: {type(e).__name__}: {e}")
    print(f"threads={threads} reps={a.reps} (median ms per call, tokenisation included)")
    print("| pairs | tokens | backend | batch | ms | max abs logit diff vs fp32 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for length in (int(x) for x in a.lengths.split(",")):
        for n in (int(x) for x in a.pairs.split(",")):
            pairs = [(QUERY, t) for t in candidates(n, length, tok)]
            ref = None
            for b in (int(x) for x in a.batches.split(",")):
                run = torch_scorer(model, tok, pairs, length, b)
                ms = timeit(run, a.reps)
                ref = run() if ref is None else ref
                print(f"| {n} | {length} | torch fp32 | {b} | {ms:.0f} | 0 |", flush=True)
            for name, path in onnx_paths.items():
                run = onnx_scorer(path, threads, tok, pairs, length)
                ms = timeit(run, a.reps)
                diff = float(np.abs(run() - ref).max())
                print(f"| {n} | {length} | {name} | {n} | {ms:.0f} | {diff:.3f} |", flush=True)
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
