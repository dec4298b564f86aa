"""Late interaction: a second look at the vector leg's candidates through the static model's token vectors.

A pooled vector is the weighted mean of a text's tokens, so one query word that matches one word of a chunk well
(a synonym, a stem) is averaged away among the rest. Each candidate the index found is re-scored

    score = cosine + weight * F,   F = 2 R P / (R + P)

with the static table's rows as token vectors (BERTScore's F1 over MaxSim): R, the query tokens' best cosine to any
of the candidate's tokens, averaged with the weight each has in the pooled query (its row's norm, the SIF weight
baked in at distillation, times its count); P, the candidate's distinct tokens' best cosine to any query token,
averaged evenly. R alone (ColBERT's MaxSim) favours long chunks, which hold a near match for every word; P keeps
them honest. It runs for either tier's candidates: the static table is loaded for the static tier anyway, and
the candidates' texts are read from the chunk table (no vector per token is stored).

Asked for in `semantic` mode only (VectorSearchRequest.late_interaction). Through the server (README "Vector
tiers", "Token late interaction"), `semantic` NDCG@10 before -> with it: static tier fit 0.790 -> 0.812, held-out
0.799 -> 0.800, paraphrase set 0.225 -> 0.296; transformer tier held-out 0.805 -> 0.815, paraphrases 0.266 ->
0.323. In routed `auto` every variant lost held-out repositories (replayed: 0.868 -> 0.858-0.863).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from codesearch.vector.embedder import Embedder, ModelUnavailable
from codesearch.vector.static_model import StaticEncoder
from codesearch.vector.store import Found, RepoIndex

log = logging.getLogger(__name__)


def maxsim(encoder: StaticEncoder, query: str, documents: list[str]) -> np.ndarray:
    """For each document, F of the module docstring (0 for a query or document without counted tokens)."""
    out = np.zeros(len(documents), dtype=np.float32)
    (query_ids,) = encoder.token_ids([query])
    if not len(query_ids) or not documents:
        return out
    table = encoder.vectors
    q_tokens, q_counts = np.unique(query_ids, return_counts=True)
    q_rows = table[q_tokens]
    q_norms = np.linalg.norm(q_rows, axis=1)
    weights = q_norms * q_counts
    if weights.sum() <= 0:
        return out
    q_unit = q_rows / np.maximum(q_norms, 1e-12)[:, None]
    doc_ids = [np.unique(ids) for ids in encoder.token_ids(documents)]
    vocab = np.unique(np.concatenate(doc_ids)) if any(len(d) for d in doc_ids) else np.zeros(0, np.int64)
    if not len(vocab):
        return out
    d_rows = table[vocab]
    cosines = q_unit @ (d_rows / np.maximum(np.linalg.norm(d_rows, axis=1), 1e-12)[:, None]).T
    for i, ids in enumerate(doc_ids):
        if len(ids):
            pair = cosines[:, np.searchsorted(vocab, ids)]
            recall = max(float(pair.max(axis=1) @ weights / weights.sum()), 0.0)
            precision = max(float(pair.max(axis=0).mean()), 0.0)  # a negative best match counts as none
            if recall + precision > 0:
                out[i] = 2 * recall * precision / (recall + precision)
    return out


def describe(encoder_id: str, weight: float) -> str:
    """What the leg report says about the re-scoring."""
    return f"token late interaction (F1 of MaxSim) over {encoder_id} at weight {weight:g}"


class LateInteraction:
    """The vector leg's re-scoring stage: the static model of each query mode (the static tier's own, or a part
    of its mode blend), used only once loaded (a query never waits for it)."""

    def __init__(self, weight: float, models: Mapping[bool, Embedder]) -> None:
        self.weight = weight
        self.models = models

    def rescore(
        self, query: str, found: list[tuple[str, Found]], repos: Mapping[str, RepoIndex], semantic: bool
    ) -> tuple[list[tuple[str, Found]], str]:
        """`found` re-scored and re-sorted, and what the leg report says (unchanged and "" when off, before the
        static model is loaded, or when a candidate's text cannot be read: a re-index swapped its generation)."""
        model = self.models.get(semantic)
        if not self.weight or not query.strip() or not found or model is None or not model.loaded:
            return found, ""
        try:
            encoder = model.static_encoder()
        except (ModelUnavailable, ValueError):
            return found, ""
        texts: dict[tuple[str, int], str] = {}
        for name in {repo for repo, _ in found}:
            keys = [f.key for repo, f in found if repo == name]
            try:
                texts |= {(name, k): t for k, t in repos[name].doc_texts(keys).items()}
            except (sqlite3.Error, OSError) as e:
                log.info("late interaction skipped: the chunk texts of %s cannot be read (%s)", name, e)
                return found, ""
        if len(texts) < len(found):
            return found, ""
        extra = maxsim(encoder, query, [texts[(repo, f.key)] for repo, f in found]) * self.weight
        rescored = [
            (repo, replace(f, score=f.score + float(x))) for (repo, f), x in zip(found, extra, strict=True)
        ]
        rescored.sort(key=lambda rf: -rf[1].score)
        return rescored, describe(model.model_id, self.weight)
