"""Loading a reranker and scoring (query, candidate) pairs with it.

A reranker directory is either a sentence-transformers CrossEncoder (any pretrained one), or a gated
cross-encoder (rerank/gated.py), with `blend.json`: a logistic
regression over the cross-encoder's score, the bi-encoder cosine and the query's lexical overlap, fit on
held-apart training data (required for a gated model, optional for a CrossEncoder). Either way scores are
probabilities in [0, 1]: the model's own activation (sigmoid for a 1-logit head), or the blend's logistic
output. Never min-max per batch.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codesearch.common.models.cache import ONNX_SUBDIR, first_usable
from codesearch.common.models.encoder import OnnxEncoder
from codesearch.common.models.lookup import model_path
from codesearch.common.models.threads import configure_torch_threads
from codesearch.config import Settings, model_cache_dir
from codesearch.rerank import gated
from codesearch.rerank import text as rtext
from codesearch.rerank.onnx_model import OnnxCrossEncoder, UnsupportedModel

log = logging.getLogger(__name__)

# bench.py: 256 tokens costs 2x (20 pairs: 1.35 s vs 2.7 s on one busy core).
DEFAULT_MAX_LENGTH = 128
# bench.py: 16 vs 32 within noise for 20-50 pairs; 32 keeps up to 32 candidates in one call.
BATCH_SIZE = 32
# torch's thread setting is process-wide and shared with the vector leg, so both default to every core. On 2
# shared cores at load ~9, one intra-op thread ran a training step 5-8x faster than two (OpenMP threads spin-wait
# for a busy core): on a crowded machine set CODESEARCH_TORCH_THREADS=1.
BLEND_FILE = "blend.json"  # next to the cross-encoder weights; absent for a plain cross-encoder
TRAINED_MODEL_DIRNAME = "model"  # settings.service_dir("rerank") / this: a model placed in the data directory


def trained_model_dir(settings: Settings) -> Path:
    return settings.service_dir("rerank") / TRAINED_MODEL_DIRNAME


def resolve_model(settings: Settings) -> tuple[str, str]:
    """(model path or name, "") or ("", why none is configured)."""
    name = settings.rerank_model.strip()
    if name:
        return name, ""
    default = trained_model_dir(settings)
    if (default / "config.json").is_file():
        return str(default), ""
    return "", (
        f"no reranker model: set CODESEARCH_RERANK_MODEL to a cross-encoder folder, or place one at {default}"
    )


@dataclass
class Candidate:
    """One candidate as the service receives it."""

    text: str
    path: str = ""
    breadcrumb: Sequence[str] = ()
    focus_lines: Sequence[int] = ()


@dataclass
class Blend:
    """sigmoid(bias + sum(weights[f] * feature f)); features among "ce", "cos", "lex"."""

    weights: dict[str, float]
    bias: float
    bi_encoder: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def load(path: Path) -> Blend:
        d = json.loads(path.read_text())
        return Blend(
            weights={k: float(v) for k, v in d["weights"].items()},
            bias=float(d["bias"]),
            bi_encoder=d.get("bi_encoder", ""),
            extra={k: v for k, v in d.items() if k not in ("weights", "bias", "bi_encoder")},
        )

    def save(self, path: Path) -> None:
        d = {"weights": self.weights, "bias": self.bias, "bi_encoder": self.bi_encoder, **self.extra}
        path.write_text(json.dumps(d, indent=2) + "\n")

    def apply(self, features: dict[str, np.ndarray]) -> np.ndarray:
        z = np.full(len(next(iter(features.values()))), self.bias, dtype=np.float64)
        for name, w in self.weights.items():
            z += w * features[name]
        return 1.0 / (1.0 + np.exp(-z))


RERANK_BACKENDS = ("onnx", "onnx-int8", "torch")


# Activations an onnx backend reproduces: both mean "sigmoid of the one logit" for a probability.
SIGMOID_ACTIVATIONS = ("", "torch.nn.modules.activation.Sigmoid", "torch.nn.modules.linear.Identity")


def _declared_max_length(path: Path) -> int:
    """The longest input the folder's tokenizer declares (0 if it does not)."""
    cfg = path / "tokenizer_config.json"
    if not cfg.is_file():
        return 0
    n = json.loads(cfg.read_text()).get("model_max_length") or 0
    return int(n) if 0 < n < 100_000 else 0  # transformers writes 1e30 for "no limit"


def _declared_activation(path: Path) -> str:
    cfg = path / "config_sentence_transformers.json"
    return str(json.loads(cfg.read_text()).get("activation_fn") or "") if cfg.is_file() else ""


class Reranker:
    """A loaded cross-encoder (plus its blend, if any). Not thread-safe: callers serialise `score`.

    backend "onnx" (default) runs the model exported to ONNX with torch's logits; "onnx-int8" quantised per
    channel; "torch" with sentence-transformers or plain torch (a GPU with device="cuda"). A model the onnx
    backends cannot run (no local folder, several labels, another activation) falls back to torch.
    """

    def __init__(
        self,
        model: str,
        max_length: int = 0,
        threads: int = 0,
        device: str = "cpu",
        backend: str = "onnx",
        cache_dirs: Sequence[Path] = (),
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        if backend not in RERANK_BACKENDS:
            raise ValueError(f"unknown rerank backend {backend!r}; use one of {', '.join(RERANK_BACKENDS)}")
        path = Path(model).expanduser()
        self.model_id = model
        blend_path = path / BLEND_FILE
        self.blend = Blend.load(blend_path) if blend_path.is_file() else None
        if not max_length and self.blend is not None:
            max_length = int(self.blend.extra.get("max_length", 0))
        # Where ONNX exports go: the first writable of these (a container's machine-wide cache is read-only
        # unless the image baked the export in).
        caches = list(cache_dirs) or [model_cache_dir()]
        self._onnx: OnnxCrossEncoder | None = None
        self._gated: Callable[[list[tuple[str, str]]], np.ndarray] | None = None
        self.backend = "torch"
        if path.is_dir() and gated.is_gated(path):
            if self.blend is None:
                raise ValueError(f"{path} holds a gated cross-encoder without its {BLEND_FILE}")
            self._load_gated(path, max_length, threads, device, backend, caches)
        elif backend != "torch" and device == "cpu" and path.is_dir():
            activation = _declared_activation(path)
            if activation not in SIGMOID_ACTIVATIONS:
                log.warning("reranker %s: activation %s needs the torch backend", model, activation)
            else:
                # The length the model was trained at, but never more than the default: longer costs latency.
                own = _declared_max_length(path) or DEFAULT_MAX_LENGTH
                self.max_length = max_length or min(own, DEFAULT_MAX_LENGTH)
                try:
                    self._onnx = first_usable(
                        caches,
                        lambda c: OnnxCrossEncoder(
                            path, self.max_length, threads, c, quantize=backend == "onnx-int8"
                        ),
                    )
                    self.backend = backend
                    self._count = self._onnx.count
                except (UnsupportedModel, ImportError) as e:  # ImportError: no onnxruntime installed
                    log.warning("reranker %s falls back to torch: %s", model, e)
        if self._onnx is None and self._gated is None:
            self._load_torch(model, path, max_length, threads, device)
        self._bi_encoder: Callable[[list[str]], np.ndarray] | None = None
        if self.blend is not None and "cos" in self.blend.weights:
            self._bi_encoder = self._load_bi_encoder(self.blend.bi_encoder, threads, device, caches)

    def _load_gated(
        self, path: Path, max_length: int, threads: int, device: str, backend: str, caches: Sequence[Path]
    ) -> None:
        """A gated cross-encoder (rerank/gated.py): onnx (or onnx-int8) on CPU unless torch is asked for."""
        config = gated.read_config(path)
        self.max_length = max_length or int(config.get("max_length") or DEFAULT_MAX_LENGTH)
        if backend != "torch" and device == "cpu":
            quantize = backend == "onnx-int8"
            onnx = first_usable(
                caches, lambda c: gated.OnnxGated(path, self.max_length, threads, c / "onnx", quantize)
            )
            self._gated = lambda pairs: onnx.scores(pairs, BATCH_SIZE)
            self._count = onnx.encoder.count
            self.backend = backend
            return
        configure_torch_threads(threads)
        module = gated.load_module(path, device)
        encoder = gated.PairEncoder(path, self.max_length, int(config["query_max_tokens"]))

        def score(pairs: list[tuple[str, str]]) -> np.ndarray:
            out = np.empty(len(pairs), dtype=np.float64)
            for s in range(0, len(pairs), BATCH_SIZE):
                out[s : s + BATCH_SIZE] = gated.torch_scores(
                    module, encoder.encode(pairs[s : s + BATCH_SIZE])
                )
            return out

        self._gated = score
        self._count = encoder.count

    def _load_torch(self, model: str, path: Path, max_length: int, threads: int, device: str) -> None:
        from sentence_transformers import CrossEncoder

        configure_torch_threads(threads)
        self.cross_encoder = CrossEncoder(
            str(path) if path.is_dir() else model,
            max_length=max_length or None,
            device=device,
            local_files_only=True,
        )
        own = self.cross_encoder.max_seq_length or DEFAULT_MAX_LENGTH
        self.max_length = max_length or min(own, DEFAULT_MAX_LENGTH)
        self.cross_encoder.max_seq_length = self.max_length
        self.cross_encoder.model.eval()
        act = self.cross_encoder.activation_fn
        # A head without its own squashing (Identity) still needs one to be a probability.
        self._torch_activation = None if act is None or type(act).__name__ == "Identity" else act
        self._count = rtext.tokenizer_counter(self.cross_encoder.tokenizer)

    def _load_bi_encoder(
        self, name: str, threads: int, device: str, caches: Sequence[Path]
    ) -> Callable[[list[str]], np.ndarray]:
        """texts -> unit vectors, on the same kind of backend as the cross-encoder (onnx: torch's vectors)."""
        bi_path = model_path(name)
        if self.backend != "torch":
            onnx_bi = first_usable(
                caches, lambda c: OnnxEncoder(bi_path, threads, c / "onnx", False, self.max_length)
            )
            return lambda texts: onnx_bi.encode(texts, BATCH_SIZE)
        from sentence_transformers import SentenceTransformer

        torch_bi = SentenceTransformer(bi_path, device=device, local_files_only=True)
        torch_bi.max_seq_length = self.max_length
        return lambda texts: np.asarray(
            torch_bi.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)
        )

    def texts(self, query: str, candidates: Sequence[Candidate]) -> list[str]:
        q_tokens = self._count([query])[0]
        return [
            rtext.candidate_text(
                q_tokens, c.path, c.breadcrumb, c.text, c.focus_lines, self.max_length, self._count
            )
            for c in candidates
        ]

    def logits(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw cross-encoder logits (a gated model's cosines), batched by length so padding stays small."""
        if self._gated is not None:
            return self._gated([(query, t) for t in texts])
        if self._onnx is not None:
            return self._onnx.logits([(query, t) for t in texts], BATCH_SIZE)
        import torch

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty(len(texts), dtype=np.float64)
        scores = self.cross_encoder.predict(
            [(query, texts[i]) for i in order],
            batch_size=BATCH_SIZE,
            activation_fn=torch.nn.Identity(),
            show_progress_bar=False,
        )
        out[order] = np.asarray(scores, dtype=np.float64).reshape(-1)
        return out

    def cosines(self, query: str, texts: Sequence[str]) -> np.ndarray:
        assert self._bi_encoder is not None
        emb = self._bi_encoder([query, *texts])
        return (emb[1:] @ emb[0]).astype(np.float64)

    def probabilities(self, logits: np.ndarray) -> np.ndarray:
        """The model's own activation for a one-logit head, sigmoid when it has none."""
        if self._onnx is not None or self._gated is not None or self._torch_activation is None:
            return 1.0 / (1.0 + np.exp(-logits))
        import torch

        return self._torch_activation(torch.from_numpy(logits)).numpy().astype(np.float64)

    def score(self, query: str, candidates: Sequence[Candidate]) -> np.ndarray:
        """Calibrated relevance probabilities in [0, 1], one per candidate, in request order."""
        texts = self.texts(query, candidates)
        if self.blend is None:
            return np.clip(self.probabilities(self.logits(query, texts)), 0.0, 1.0)
        feats: dict[str, np.ndarray] = {}
        if "ce" in self.blend.weights:
            feats["ce"] = self.logits(query, texts)
        if "cos" in self.blend.weights:
            feats["cos"] = self.cosines(query, texts)
        if "lex" in self.blend.weights:
            feats["lex"] = np.array([rtext.lexical_overlap(query, t) for t in texts], dtype=np.float64)
        return np.clip(self.blend.apply(feats), 0.0, 1.0)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m codesearch.rerank.model MODEL`: exports a reranker folder ahead of time (an image build), so
    read-only servers start at once."""
    import argparse

    ap = argparse.ArgumentParser(description="export a reranker model to ONNX into the model cache")
    ap.add_argument("model", help="a reranker folder (a cross-encoder, or a gated one with blend.json)")
    ap.add_argument("--int8", action="store_true", help="the onnx-int8 backend's export instead")
    a = ap.parse_args(argv)
    if not (Path(a.model) / "config.json").is_file():
        print(f"codesearch: {a.model!r} is not a model folder")
        return 1
    cache = Settings.from_env().model_cache
    rr = Reranker(a.model, backend="onnx-int8" if a.int8 else "onnx", cache_dirs=[cache])
    print(f"{a.model}: {rr.backend} backend ready, exports under {cache / ONNX_SUBDIR}")
    return 0 if rr.backend != "torch" else 1


if __name__ == "__main__":
    raise SystemExit(main())
