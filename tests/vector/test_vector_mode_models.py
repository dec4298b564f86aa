"""A static model per search mode from one index (vector/mode_models.py): each part of the mode blend scores
exactly its model's cosine, and a leg over the blend answers routed `auto` as a server of the routed model alone
and `semantic` mode as a server of the semantic-mode model alone. Real bundled models, real gRPC."""

from __future__ import annotations

import importlib.util
import inspect
import json
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.v1 import vector_pb2, vector_pb2_grpc
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.mode_models import blend_parts, static_tier_model
from codesearch.vector.query_boost import BOOSTED_MARK
from codesearch.vector.service import VectorServicer

pytestmark = pytest.mark.model

DISTILLED, TRAINED = "all-MiniLM-L6-v2", "all-MiniLM-L6-v2+stdlib"
# Real standard-library code and questions about it.
SOURCES = [
    inspect.getsource(tempfile.TemporaryDirectory),
    inspect.getsource(shutil.rmtree),
    inspect.getsource(json.dumps),
    inspect.getsource(shutil.copyfileobj),
]
QUESTIONS = [
    "how are temporary directories cleaned up",
    "remove a directory tree recursively",
    "serialize an object to a JSON string",
    "copy data from one file object to another",
]


def _service_tests():  # type: ignore[no-untyped-def,unused-ignore]
    """The corpus and helpers of the service tests (a module beside this one; the tests are not a package)."""
    spec = importlib.util.spec_from_file_location(
        "vector_service_tests", Path(__file__).with_name("test_vector_service.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_tests = _service_tests()
serve = _tests.serve  # the fixture


def test_each_part_of_the_mode_blend_scores_exactly_its_models_cosine() -> None:
    settings = Settings.from_env(
        {"CODESEARCH_STATIC_MODEL": DISTILLED, "CODESEARCH_STATIC_SEMANTIC_MODEL": TRAINED}
    )
    assert static_tier_model(settings) == f"{DISTILLED}|{TRAINED}"
    blend = Embedder(static_tier_model(settings), STATIC_BACKEND, model_cache=settings.model_cache)
    parts = blend_parts(settings, blend)
    assert [(mode, p.model_name) for mode, p in parts.items()] == [(False, DISTILLED), (True, TRAINED)]
    docs = blend.encode_documents(SOURCES)
    scores = {}
    for mode, part in parts.items():
        single = Embedder(part.model_name, STATIC_BACKEND, model_cache=settings.model_cache)
        single_docs = single.encode_documents(SOURCES)
        assert part.model_id == single.model_id
        assert part.load() and part.dims == single.dims == blend.dims // 2
        for question in QUESTIONS:
            query = part.lift(part.encode_query(question))
            assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-6)  # the index searches by cosine
            got = docs @ query * part.score_factor
            assert np.abs(got - single_docs @ single.encode_query(question)).max() < 1e-5, (mode, question)
            scores[mode, question] = got
    # Two different rankings from one index.
    assert any(np.abs(scores[False, q] - scores[True, q]).max() > 1e-2 for q in QUESTIONS)
    # The same model for both modes (or none named): no blend, the static model alone.
    for same in ("", DISTILLED):
        plain = replace(settings, static_semantic_model=same)
        assert static_tier_model(plain) == DISTILLED
        assert blend_parts(plain, Embedder(DISTILLED, STATIC_BACKEND, model_cache=settings.model_cache)) == {}


def _hits(response: vector_pb2.VectorSearchResponse) -> list[tuple[str, int, float]]:
    return [(h.location.path, h.location.start_line, h.score) for h in response.hits]


def _same_answers(got: vector_pb2.VectorSearchResponse, expected: vector_pb2.VectorSearchResponse) -> None:
    assert [h[:2] for h in _hits(got)] == [h[:2] for h in _hits(expected)]
    assert [h[2] for h in _hits(got)] == pytest.approx([h[2] for h in _hits(expected)], abs=1e-5)


def test_a_leg_over_the_mode_blend_answers_each_mode_as_that_models_own_leg(tmp_path: Path, serve) -> None:
    def leg(name: str, **env: str) -> tuple[VectorServicer, vector_pb2_grpc.VectorServiceStub]:
        home = tmp_path / name
        env |= {"CODESEARCH_HOME": str(home), "CODESEARCH_VECTOR_TIERS": "static"}
        servicer = VectorServicer(
            Settings.from_env(env | {"CODESEARCH_EMBEDDING_CACHE": str(home / "emb.db")})
        )
        stub = serve(servicer)
        assert _tests.update(stub, "demo", _tests.corpus_files(), replace_all=True).pending == 0
        return servicer, stub

    blend, blend_stub = leg(
        "blend", CODESEARCH_STATIC_MODEL=DISTILLED, CODESEARCH_STATIC_SEMANTIC_MODEL=TRAINED
    )
    routed, routed_stub = leg(
        "routed", CODESEARCH_STATIC_MODEL=DISTILLED, CODESEARCH_STATIC_SEMANTIC_MODEL=""
    )  # "": the static model in every mode
    semantic, semantic_stub = leg(
        "semantic", CODESEARCH_STATIC_MODEL=TRAINED, CODESEARCH_STATIC_SEMANTIC_MODEL=""
    )
    stats = blend_stub.GetVectorStats(vector_pb2.GetVectorStatsRequest())
    assert stats.dimensions == 512 and stats.model == blend.embedders["static"].model_id
    servicers = (blend, routed, semantic)
    for _ in range(600):  # each loads the query map and the transformer for queries
        if not any(b.pending for s in servicers for b in s.boosters.values()):
            break
        time.sleep(0.1)
    assert all(s.boosters[s is blend].ready for s in servicers)
    for question in _tests.QUERIES:
        # The routed part, asked for the plain static query.
        auto = vector_pb2.VectorSearchRequest(
            repositories=["demo"], text=question, limit=7, plain_static_query=True
        )
        got, expected = blend_stub.VectorSearch(auto), routed_stub.VectorSearch(auto)
        _same_answers(got, expected)
        assert got.query_encoder == expected.model and not got.query_boosted
        # Routed `auto` (no flag): the routed part's query, boosted with the routed model's map.
        auto = vector_pb2.VectorSearchRequest(repositories=["demo"], text=question, limit=7)
        got, expected = blend_stub.VectorSearch(auto), routed_stub.VectorSearch(auto)
        _same_answers(got, expected)
        assert got.query_boosted and got.query_encoder == expected.query_encoder
        # `semantic` mode: the semantic-mode model's query, boosted with that model's map.
        mode = vector_pb2.VectorSearchRequest(
            repositories=["demo"], text=question, limit=7, semantic_static_model=True
        )
        got, expected = blend_stub.VectorSearch(mode), semantic_stub.VectorSearch(mode)
        _same_answers(got, expected)
        assert got.query_boosted and got.query_encoder == expected.query_encoder
        assert BOOSTED_MARK in got.query_encoder and got.query_encoder.endswith(expected.model)
        assert got.hits[0].location.path == _tests.QUERIES[question]
