"""Fine-tuning the reranker's cross-encoder on mined groups: a listwise loss, embeddings and lower layers frozen
(CPU budget). The gated cross-encoder (rerank/gated.py) starts as the bundled bi-encoder; a plain
sentence-transformers CrossEncoder is trained the same way (tests, benchmarks)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import numpy as np

from codesearch.common.models.lookup import model_path
from codesearch.rerank import gated

log = logging.getLogger(__name__)

# Bundled offline; its transformer seeds the cross-encoder and gives the cosine.
BASE_MODEL = "all-MiniLM-L6-v2"
FROZEN_LAYERS = 3  # of 6: backward through the top half only, ~1/3 less time a step; embeddings frozen too
# The gated model starts as a trained bi-encoder: gentle, yet ~150 steps move it (held-out MRR 0.75 -> 0.82).
ENCODER_LR = 5e-5
GATE_LR = 5e-2  # the gate and the loss temperature are single scalars that must move in a few hundred steps
INITIAL_TEMPERATURE = 20.0  # cosines span ~0.3 within a group: x20 gives the listwise softmax a usable spread
CE_ENCODER_LR = 1e-4  # a plain cross-encoder (train_cross_encoder, tests): higher than the usual 2e-5
CE_HEAD_LR = 2e-3  # its fresh head must move fast
WARMUP_STEPS = 10  # keeps the first large gradients from wrecking the encoder


def score_pairs(
    module: object, encoder: gated.PairEncoder, pairs: Sequence[tuple[str, str]], batch: int = 32
) -> np.ndarray:
    """Gated cross-encoder scores (cosines) for pairs, batched by length."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))
    out = np.empty(len(pairs))
    module.eval()  # type: ignore[attr-defined]
    for k in range(0, len(order), batch):
        idx = order[k : k + batch]
        out[idx] = gated.torch_scores(module, encoder.encode([pairs[i] for i in idx]))
    return out


def new_cross_encoder(max_length: int, device: str) -> object:
    """A plain sentence-transformers CrossEncoder from the bundled MiniLM with a fresh 1-logit head."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(
        model_path(BASE_MODEL),
        num_labels=1,
        max_length=max_length,
        device=device,
        local_files_only=True,
    )


Items = list[tuple[str, list[str]]]  # a step's groups: (query, [positive, *negatives])


def train_steps(
    bert: object,
    groups: list[dict[str, object]],
    logits_of: Callable[[Items], object],
    batches: Callable[[int], Items],
    deadline: float,
    max_steps: int,
) -> int:
    """Listwise training until the deadline or max_steps; returns the number of steps taken.

    `bert`'s embeddings and lower FROZEN_LAYERS are frozen; `groups` are optimiser parameter groups;
    logits_of(items) gives a (len(items), width) tensor whose column 0 is each positive.
    """
    import torch

    for p in bert.embeddings.parameters():  # type: ignore[attr-defined]
        p.requires_grad = False
    for layer in bert.encoder.layer[:FROZEN_LAYERS]:  # type: ignore[attr-defined]
        for p in layer.parameters():
            p.requires_grad = False
    params = [p for g in groups for p in g["params"]]  # type: ignore[attr-defined]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP_STEPS))
    step = 0
    while step < max_steps and time.monotonic() < deadline:
        items = batches(step)
        logits = logits_of(items)
        target = torch.zeros(len(items), dtype=torch.long, device=logits.device)  # type: ignore[attr-defined]
        loss = torch.nn.functional.cross_entropy(logits, target)  # type: ignore[arg-type]
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        step += 1
        if step % 10 == 0:
            log.info("step %d loss %.3f", step, loss.item())
    return step


def train_gated(
    module: object,
    encoder: gated.PairEncoder,
    batches: Callable[[int], Items],
    deadline: float,
    max_steps: int,
) -> int:
    """Trains a gated cross-encoder (rerank/gated.py); the temperature is for the loss only."""
    import torch

    device = next(module.parameters()).device  # type: ignore[attr-defined]
    temperature = torch.nn.Parameter(torch.tensor(INITIAL_TEMPERATURE, device=device))

    def logits_of(items: Items) -> torch.Tensor:
        width = len(items[0][1])
        batch = encoder.encode([(q, t) for q, texts in items for t in texts])
        cos = module(**{k: torch.from_numpy(v).to(device) for k, v in batch.items()})  # type: ignore[operator]
        return (cos * temperature).view(len(items), width)

    body = [p for n, p in module.bert.named_parameters() if _trainable(n)]  # type: ignore[attr-defined]
    groups = [
        {"params": body, "lr": ENCODER_LR},
        {"params": [module.gate, temperature], "lr": GATE_LR, "weight_decay": 0.0},  # type: ignore[attr-defined]
    ]
    module.train()  # type: ignore[attr-defined]
    steps = train_steps(module.bert, groups, logits_of, batches, deadline, max_steps)  # type: ignore[attr-defined]
    module.eval()  # type: ignore[attr-defined]
    return steps


def train_cross_encoder(
    ce: object, batches: Callable[[int], Items], deadline: float, max_steps: int, max_length: int
) -> int:
    """Trains a plain sentence-transformers CrossEncoder (its fresh head faster than the encoder)."""
    import torch

    model = ce.model  # type: ignore[attr-defined]
    tokenizer = ce.tokenizer  # type: ignore[attr-defined]

    def logits_of(items: Items) -> torch.Tensor:
        enc = tokenizer(
            [q for q, texts in items for _ in texts],
            [t for _, texts in items for t in texts],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        ).to(model.device)
        return model(**enc).logits.view(len(items), len(items[0][1]))

    named = [(n, p) for n, p in model.named_parameters() if _trainable(n.split(".", 1)[-1])]
    groups = [
        {"params": [p for n, p in named if not n.startswith("classifier")], "lr": CE_ENCODER_LR},
        {"params": [p for n, p in named if n.startswith("classifier")], "lr": CE_HEAD_LR},
    ]
    model.train()
    steps = train_steps(model.base_model, groups, logits_of, batches, deadline, max_steps)
    model.eval()
    return steps


def _trainable(name: str) -> bool:
    """Whether a BERT parameter (named relative to the BertModel) is outside the frozen part."""
    frozen = ("embeddings.", *(f"encoder.layer.{i}." for i in range(FROZEN_LAYERS)))
    return not name.startswith(frozen)
