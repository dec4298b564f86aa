"""The vector model's own factor on the leg's fusion weight (VectorSearchResponse.fusion_weight): the static
tier's trained model declares one, the transformer none, and the fused answer uses the factor of the model
that answered."""

from __future__ import annotations

import pytest
from codesearch.config import Settings
from codesearch.v1 import common_pb2, search_pb2
from codesearch.vector.static_model import StaticEncoder, static_model_path

pytestmark = pytest.mark.model


def vector_report(resp: search_pb2.SearchResponse) -> common_pb2.LegReport:
    return next(r for r in resp.legs if r.leg == common_pb2.LEG_VECTOR)


def test_the_answering_models_factor_scales_the_vector_legs_weight(held_upgrade) -> None:
    settings = Settings.from_env({})
    factor = StaticEncoder(static_model_path(settings.static_model, settings.model_cache)).fusion_weight
    request = search_pb2.SearchRequest(query="how does the operation get retried with a growing delay")
    static = vector_report(held_upgrade.stub.Search(request))
    assert "tier static" in static.detail and static.weight > 0
    held_upgrade.finish()
    transformer = vector_report(held_upgrade.stub.Search(request))
    assert "tier transformer" in transformer.detail
    assert static.weight == pytest.approx(transformer.weight * factor)
