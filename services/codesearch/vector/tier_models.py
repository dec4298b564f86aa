"""Which model each tier of the vector leg runs, loaded once per process."""

from __future__ import annotations

import threading

from codesearch.common.errors import MODEL_LOADING
from codesearch.config import Settings
from codesearch.v1 import vector_pb2
from codesearch.vector import tiers as vtiers
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.query_boost import QueryBooster

SERVICE = "vector"  # the leg's data folder under the home: the embedders' fallback model cache lives there

_EMBEDDERS: dict[tuple[str, str, int], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def shared_embedder(settings: Settings, tier: str = vtiers.TRANSFORMER) -> Embedder:
    """One loaded model per configuration per process (servers in tests and in one binary share it)."""
    if tier == vtiers.STATIC:
        key = (settings.static_model, STATIC_BACKEND, settings.torch_threads)
    else:
        key = (settings.embed_model, settings.embed_backend, settings.torch_threads)
    with _EMBEDDERS_LOCK:
        emb = _EMBEDDERS.get(key)
        if emb is None:
            model, backend, threads = key
            emb = Embedder(
                model,
                backend,
                threads,
                cache_dir=settings.service_dir(SERVICE),
                model_cache=settings.model_cache,
            )
            _EMBEDDERS[key] = emb
        return emb


def tier_embedders(settings: Settings) -> dict[str, Embedder]:
    """{tier: its model}, worst to best. A transformer tier configured with the static model itself is the
    static tier already, so it is left out."""
    names = vtiers.parse_tiers(settings.vector_tiers)
    embedders = {t: shared_embedder(settings, t) for t in names}
    if len(embedders) > 1 and embedders[vtiers.STATIC].model_id == embedders[vtiers.TRANSFORMER].model_id:
        del embedders[vtiers.TRANSFORMER]
    return embedders


def query_booster(settings: Settings, static: Embedder) -> QueryBooster:
    """The query boost (vector/query_boost.py) of the static tier's model with the configured transformer, which
    it loads for queries when the transformer tier is not configured."""
    transformer = shared_embedder(settings, vtiers.TRANSFORMER)
    return QueryBooster(static, transformer, settings.static_query_map, settings.static_query_weight)


def tier_info(tier: str, emb: Embedder) -> vector_pb2.VectorTier:
    reason = emb.unavailable_reason or ("" if emb.loaded else f"{tier} {MODEL_LOADING}")
    return vector_pb2.VectorTier(
        tier=tier,
        model=emb.model_id,
        dimensions=emb.dims,
        backend=emb.backend_name,
        unavailable_reason=reason,
    )
