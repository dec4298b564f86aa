"""Late interaction: a second look at the vector leg's candidates through the static model's token vectors.

A pooled vector is the weighted mean of a text's tokens, so one query word that matches one word of a chunk well
(a synonym, a stem) is averaged away among the rest. Each candidate the index found is re-scored

    score = cosine + weight * F,   F = 2 R P / (R + P)

(the static tier's cosine first blended with the candidate head's, HEAD_SHARE below)

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
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from codesearch.vector.embedder import Embedder, ModelUnavailable
from codesearch.vector.static_model import StaticEncoder, document_head
from codesearch.vector.store import Found, RepoIndex

log = logging.getLogger(__name__)

# Chunks whose token ids stay cached: tokenising a candidate's text is most of the stage's cost (~6 of ~8 ms for
# 50 standard-library chunks), and an agent's questions about one code base meet the same chunks again. 46-57
# distinct ids a chunk on average (cpython-lib, curl, chi; p95 114-128) as int32, plus the key: ~15 MB at most;
# with the static tier's candidates' head vectors (256 float32, 1 KiB each; the transformer tier's get none) ~66 MB
# at most.
TOKEN_CACHE_CHUNKS = 50_000
# The static tier's candidates are re-scored with their head too: (1 - HEAD_SHARE) x cosine + HEAD_SHARE x the
# query's cosine with the candidate's head (its first lines: path words, signature, docstring, names;
# static_model.document_head), before F is added. Head pooling the whole index lifted paraphrases
# but cost routed `auto` (not shipped); here it reaches only where late interaction runs (`semantic` mode, long
# descriptions). Offline over the stdlib's static vectors (paraphrase nDCG@10, boosted query, no F): the plain top 50
# 0.252, re-scored at 0.35 / 0.5 / 0.7: 0.265 / 0.274 / 0.280 (head-pooled index: 0.274 / 0.283 / 0.292).
HEAD_SHARE = 0.7


def texts_f1(encoder: StaticEncoder, query: str, documents: list[str]) -> np.ndarray:
    """For each document, F of the module docstring (0 for a query or document without counted tokens)."""
    return token_f1(encoder, query, [np.unique(ids) for ids in encoder.token_ids(documents)])


def token_f1(encoder: StaticEncoder, query: str, doc_ids: list[np.ndarray]) -> np.ndarray:
    """F for documents given as their distinct counted token ids (sorted)."""
    out = np.zeros(len(doc_ids), dtype=np.float32)
    (query_ids,) = encoder.token_ids([query])
    if not len(query_ids) or not doc_ids:
        return out
    table = encoder.vectors
    q_tokens, q_counts = np.unique(query_ids, return_counts=True)
    q_rows = table[q_tokens]
    q_norms = np.linalg.norm(q_rows, axis=1)
    weights = q_norms * q_counts
    total = float(weights.sum())
    if total <= 0:
        return out
    q_unit = q_rows / np.maximum(q_norms, 1e-12)[:, None]
    vocab = np.unique(np.concatenate(doc_ids)) if any(len(d) for d in doc_ids) else np.zeros(0, np.int64)
    if not len(vocab):
        return out
    d_rows = table[vocab]
    cosines = q_unit @ (d_rows / np.maximum(np.linalg.norm(d_rows, axis=1), 1e-12)[:, None]).T
    for i, ids in enumerate(doc_ids):
        if len(ids):
            pair = cosines[:, np.searchsorted(vocab, ids)]
            recall = max(float(pair.max(axis=1) @ weights) / total, 0.0)
            precision = max(float(pair.max(axis=0).mean()), 0.0)  # a negative best match counts as none
            if recall + precision > 0:
                out[i] = 2 * recall * precision / (recall + precision)
    return out


def describe(encoder_id: str, weight: float) -> str:
    """What the leg report says about the re-scoring."""
    return f"token late interaction (F1 of MaxSim) over {encoder_id} at weight {weight:g}"


class LateInteraction:
    """The vector leg's re-scoring stage: the static tier's model, used only once loaded (a query never waits
    for it)."""

    def __init__(self, weight: float, model: Embedder | None) -> None:
        self.weight = weight
        self.model = model
        # (static model id, doc text hash) -> the chunk's distinct token ids and its head's unit vector (None
        # until a static-tier query needs it), most recently used last
        self._ids: OrderedDict[tuple[str, str], tuple[np.ndarray, np.ndarray | None]] = OrderedDict()
        self._lock = threading.Lock()

    def rescore(
        self,
        query: str,
        found: list[tuple[str, Found]],
        repos: Mapping[str, RepoIndex],
        static_query: np.ndarray | None = None,
    ) -> tuple[list[tuple[str, Found]], str]:
        """`found` re-scored and re-sorted, and what the leg report says (unchanged and "" when off, before the
        static model is loaded, or when a candidate's text cannot be read: a re-index swapped its generation).
        `static_query`: the query's vector in the static model's space when the static tier found the candidates
        (their scores its cosines): each cosine then blends with the candidate head's (HEAD_SHARE)."""
        model = self.model
        if not self.weight or not query.strip() or not found or model is None or not model.loaded:
            return found, ""
        try:
            encoder = model.static_encoder()
        except (ModelUnavailable, ValueError):
            return found, ""
        with_head = static_query is not None and len(static_query) == encoder.dims
        try:
            tokens = self._tokens(model.model_id, encoder, found, repos, with_head)
        except (sqlite3.Error, OSError, KeyError) as e:  # a re-index swapped the generation under this query
            log.info("late interaction skipped: chunk texts cannot be read (%s)", e)
            return found, ""
        doc_ids = [ids for ids, _head in tokens]
        scores = np.array([f.score for _, f in found], dtype=np.float32)
        if static_query is not None and with_head:
            heads = np.stack([head for _ids, head in tokens if head is not None])
            scores = (1.0 - HEAD_SHARE) * scores + HEAD_SHARE * (heads @ static_query)
        scores += token_f1(encoder, query, doc_ids) * self.weight
        rescored = [(repo, replace(f, score=float(x))) for (repo, f), x in zip(found, scores, strict=True)]
        rescored.sort(key=lambda rf: -rf[1].score)
        head_note = f", cosine {1 - HEAD_SHARE:g} whole + {HEAD_SHARE:g} head" if with_head else ""
        return rescored, describe(model.model_id, self.weight) + head_note

    def _tokens(
        self,
        model_id: str,
        encoder: StaticEncoder,
        found: list[tuple[str, Found]],
        repos: Mapping[str, RepoIndex],
        with_heads: bool,
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Each candidate's distinct token ids, and its head's unit vector when `with_heads`: from the cache by
        (model, text hash), else read, tokenised (and the head embedded). Raises KeyError when a candidate's text is
        gone from its repository's chunk table."""
        keys = [(model_id, f.meta.doc_hash) for _, f in found]
        ids: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        with self._lock:
            for i, k in enumerate(keys):
                if (got := self._ids.get(k)) is not None and (got[1] is not None or not with_heads):
                    self._ids.move_to_end(k)
                    ids[i] = got
        missing = [i for i in range(len(found)) if i not in ids]
        by_repo: dict[str, list[int]] = {}
        for i in missing:
            by_repo.setdefault(found[i][0], []).append(i)
        for name, rows in by_repo.items():
            texts = repos[name].doc_texts([found[i][1].key for i in rows])
            read = [texts[found[i][1].key] for i in rows]
            made = encoder.token_ids(read)
            heads = encoder.encode([document_head(t) for t in read]) if with_heads else [None] * len(read)
            ids |= {
                i: (np.unique(row_ids).astype(np.int32), head)
                for i, row_ids, head in zip(rows, made, heads, strict=True)
            }
        with self._lock:
            for i in missing:
                self._ids[keys[i]] = ids[i]
            while len(self._ids) > TOKEN_CACHE_CHUNKS:
                self._ids.popitem(last=False)
        return [ids[i] for i in range(len(found))]
