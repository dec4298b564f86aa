"""The served blend: a logistic fit of the cross-encoder's score, the bi-encoder cosine and the lexical overlap
on held-apart files, so the served scores are calibrated probabilities; and how scorers are compared (MRR over
groups, reciprocal rank fusion of two first stages)."""

from __future__ import annotations

import numpy as np

from codesearch.common.rank_fusion import rrf

RRF_K = 60.0  # the fused order in the report: the textbook constant, as the naive search baseline uses
MIN_COS_GAIN = (
    0.01  # a blend that needs the bi-encoder (twice the latency) must beat the best one without it by this
)
L2 = 1e-2  # ridge for the logistic blend; the features are few and on similar scales

BLEND_CANDIDATES: tuple[tuple[str, ...], ...] = (
    ("ce",),
    ("ce", "lex"),
    ("cos", "lex"),
    ("ce", "cos"),
    ("ce", "cos", "lex"),
)
# Every blend served keeps the lexical overlap, whatever the mined split prefers: it costs nothing, and reranking
# the search's fused top 20 (dev set, auto) measured ce -> ce+lex concept MRR@10 0.954 -> 0.982 and paraphrases
# 0.264 / 0.247 -> 0.271 / 0.281 (tune / check). The mined groups, where no positive shares more words with its
# query than the BM25-mined negatives do, cannot show this.
CHOSEN_BLENDS_NEED = "lex"


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, iters: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (few features): weights, bias, in the raw features' units.

    Fits on standardised features so the ridge shrinks each feature alike (a cosine varies ~0.1 across a
    group, a logit ~5: unscaled, the same ridge would all but erase the cosine).
    """
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    xb = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) / len(y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb / len(y) + np.diag(reg) + 1e-9 * np.eye(len(w))
        delta = np.linalg.solve(hess, grad)
        w -= delta
        if np.abs(delta).max() < 1e-8:
            break
    return w[:-1] / sd, float(w[-1] - (w[:-1] * mu / sd).sum())


def fused(a: np.ndarray, b: np.ndarray, group_size: int, k: float = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion of two scorers within each group (rows as in `mrr`): what the search fuses, by the
    same function (common/rank_fusion.py)."""
    members = [str(i) for i in range(group_size)]
    out = np.empty(len(a))
    for start in range(0, len(a), group_size):

        def order(x: np.ndarray, start: int = start) -> list[str]:
            return [members[j] for j in np.argsort(-x[start : start + group_size], kind="stable")]

        scores = rrf([order(a), order(b)], k)
        out[start : start + group_size] = [scores[m] for m in members]
    return out


def mrr(scores: np.ndarray, group_size: int) -> float:
    """Groups are consecutive rows with the positive first; ties count against the positive."""
    s = scores.reshape(-1, group_size)
    ranks = 1 + (s[:, 1:] >= s[:, :1]).sum(axis=1)
    return float((1.0 / ranks).mean())
