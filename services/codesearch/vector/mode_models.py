"""Which static model scores a query, per search mode, from one index.

Off by default (one static model, `+stdlib`, in every mode). Made when routed `auto` ranked best with the
distilled static model and `semantic` mode with one trained with the transformer as teacher (README "Vector
tiers"); kept for a pair of models that rank best in different modes. With CODESEARCH_STATIC_SEMANTIC_MODEL
naming another model than CODESEARCH_STATIC_MODEL, the static tier stores the blend of both (static_blend.py),

    v = [sqrt(w) * a, sqrt(1 - w) * b],

and a query asks for one part: q = [q_a, 0] gives v . q = sqrt(w) * a . q_a, so the score over sqrt(w) is exactly
the routed model's cosine, and [0, q_b] over sqrt(1 - w) the semantic-mode model's. So each mode ranks as a server of its model alone would, from
one index embedded once, at twice the static vector memory. `VectorSearchRequest.semantic_static_model` picks the
part; the query boost (query_boost.py) applies to the part, with that part's query map.
"""

from __future__ import annotations

import numpy as np

from codesearch.config import Settings
from codesearch.vector import static_blend
from codesearch.vector.embedder import STATIC_BACKEND, Embedder, ModelUnavailable
from codesearch.vector.static_model import StaticEncoder

ROUTED, SEMANTIC = 0, 1  # the parts of the blend: routed first (static_blend.mode_blend_name)


def static_tier_model(settings: Settings) -> str:
    """The static tier's model name: the static model, or the blend of it and the semantic-mode model."""
    return static_blend.mode_blend_name(settings.static_model, settings.static_semantic_model)


class BlendPart(Embedder):
    """One model of the static tier's blend, embedding queries alone: its own id, query cache and token table
    (the blend's columns, not a copy), and `lift` to put its query vector into the blend's space."""

    def __init__(self, blend: Embedder, index: int, name: str) -> None:
        super().__init__(name, STATIC_BACKEND, blend.threads, blend.cache_dir, blend.model_cache)
        self.blend = blend
        self.index = index

    def _make_backend(self) -> StaticEncoder:
        if not self.blend.load():
            raise ModelUnavailable(self.blend.unavailable_reason)
        return self.blend.static_encoder().part(self.index)

    def lift(self, query: np.ndarray) -> np.ndarray:
        """The unit blend-space query of this part alone: its inner product with a stored blend vector is this
        part's cosine times its scale (`score_factor` undoes that)."""
        start, end, _ = self.blend.static_encoder().segments[self.index]
        out = np.zeros(self.blend.dims, np.float32)
        out[start:end] = query
        return out

    @property
    def score_factor(self) -> float:
        """1 / the part's scale: a lifted query's score times this is exactly the part's cosine. (The index
        searches by cosine, so the query is kept a unit vector and the score rescaled after.)"""
        return 1.0 / self.blend.static_encoder().segments[self.index][2]


def blend_parts(settings: Settings, static: Embedder | None) -> dict[bool, BlendPart]:
    """{semantic mode?: the part that scores the query} when the static tier is a mode blend, else {}."""
    if static is None or static.model_name == settings.static_model:
        return {}
    return {
        False: BlendPart(static, ROUTED, settings.static_model),
        True: BlendPart(static, SEMANTIC, settings.static_semantic_model),
    }
