"""Fitting the static tier's query map (codesearch_lab/static/query_map.py) and how the product reads one: the
transformer's query vector mapped into the static space (vector/query_map.py, vector/query_boost.py). Real models: the bundled MiniLM and the static
model distilled from it; real chunks: functions of Python's own standard library."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector import query_map
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.query_boost import QueryBooster
from codesearch.vector.static_model import static_model_id
from codesearch_lab.static import query_map as query_map_fit

from tests.vector import stdlib_chunks

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def models() -> tuple[Embedder, Embedder]:
    """(the distilled static model, the default transformer), both made offline from the bundled MiniLM; the maps
    here are fitted in the test."""
    settings = Settings.from_env({"CODESEARCH_STATIC_MODEL": "all-MiniLM-L6-v2"})
    static = Embedder(settings.static_model, STATIC_BACKEND, model_cache=settings.model_cache)
    transformer = Embedder(settings.embed_model, settings.embed_backend, model_cache=settings.model_cache)
    assert static.load(), static.unavailable_reason
    assert transformer.load(), transformer.unavailable_reason
    return static, transformer


def _chunks() -> list[str]:
    return stdlib_chunks.sources()


def _fitted(static: Embedder, transformer: Embedder, texts: list[str], **meta: str) -> query_map.QueryMap:
    names = {"teacher": transformer.model_name, "static_id": static.table_id, **meta}
    return query_map_fit.make(
        transformer.encode_documents(texts), static.encode_documents(texts), static.static_table(), names
    )


def test_a_map_fitted_on_real_chunks_maps_the_transformer_into_the_static_space(
    models: tuple[Embedder, Embedder], tmp_path: Path
) -> None:
    static, transformer = models
    texts = _chunks()
    qmap = _fitted(static, transformer, texts)
    assert qmap.matrix.shape == (transformer.dims, static.dims) and qmap.meta["chunks"] == len(texts)
    query_map_fit.save(qmap, tmp_path / "map.npz")
    loaded = query_map.load(tmp_path / "map.npz")
    assert np.array_equal(loaded.matrix, qmap.matrix) and loaded.meta == qmap.meta
    # The fit reproduces each chunk's static vector from its transformer vector far better than chance.
    mapped = transformer.encode_documents(texts) @ loaded.matrix
    mapped /= np.linalg.norm(mapped, axis=1, keepdims=True)
    cos = np.sum(mapped * static.encode_documents(texts), axis=1)
    assert cos.min() > 0.9, cos
    # On this machine the table is the map's own: the map is used as fitted.
    assert np.allclose(query_map.local_matrix(loaded, static.static_table()), loaded.matrix, atol=1e-5)
    # A table distilled elsewhere with other PCA signs: the map turns with it, so the scores stay the same.
    flips = np.where(np.arange(static.dims) % 3 == 0, -1.0, 1.0).astype(np.float32)
    turned = query_map.local_matrix(loaded, static.static_table() * flips)
    assert np.allclose(turned, loaded.matrix * flips, atol=1e-4)


def test_a_map_of_other_models_is_refused_with_the_reason(
    models: tuple[Embedder, Embedder], tmp_path: Path
) -> None:
    static, transformer = models
    texts = _chunks()
    other_teacher = _fitted(static, transformer, texts, teacher="some-other-transformer")
    assert "maps the transformer 'some-other-transformer'" in query_map.mismatch(
        other_teacher, transformer.model_name, static.table_id
    )
    stdlib_id = static_model_id("all-MiniLM-L6-v2+stdlib")
    other_static = _fitted(static, transformer, texts, static_id=stdlib_id)
    problem = query_map.mismatch(other_static, transformer.model_name, static.table_id)
    assert problem.startswith(f"it maps into the static model {stdlib_id!r}")
    random_table = np.random.default_rng(0).normal(size=static.static_table().shape).astype(np.float32)
    with pytest.raises(ValueError, match="not the one the query map was fitted for"):
        query_map.local_matrix(other_static, random_table)
    # The booster refuses such a file, says why, and the static query answers alone.
    query_map_fit.save(other_static, tmp_path / "other.npz")
    booster = QueryBooster(static, transformer, str(tmp_path / "other.npz"), 0.5)
    booster.prepare()
    assert not booster.ready and not booster.pending
    assert "static queries are not boosted" in booster.off_reason and stdlib_id in booster.off_reason
    assert booster.encoder == static.model_id
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a map")
    bad = QueryBooster(static, transformer, str(corrupt), 0.5)
    bad.prepare()
    assert not bad.ready and "is not a query map file" in bad.off_reason
    out_of_range = QueryBooster(static, transformer, "", 1.5)
    out_of_range.prepare()
    assert not out_of_range.ready and "between 0 and 1" in out_of_range.off_reason
