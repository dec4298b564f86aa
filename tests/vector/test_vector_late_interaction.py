"""Token late interaction over the static model: the score itself (the F1 of two MaxSims), the vector leg re-scoring its candidates
with it over real gRPC, and its setting. The real static model (distilled from the bundled MiniLM)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from codesearch.common.doc_text import doc_text
from codesearch.config import ConfigError, Settings
from codesearch.v1 import vector_pb2
from codesearch.vector import late_interaction, tiers
from codesearch.vector.late_interaction import texts_f1
from codesearch.vector.service import VectorServicer
from codesearch.vector.static_model import StaticEncoder, document_head
from codesearch.vector.store import RepoIndex
from codesearch.vector.tier_models import shared_embedder

from tests.vector import test_vector_tiers as _tiers  # its corpus, helpers and fixtures
from tests.vector.test_vector_service import Serve

serve, static_ready, corpus_files, update, settings = (
    _tiers.serve,
    _tiers.static_ready,
    _tiers.corpus_files,
    _tiers.update,
    _tiers.settings,  # both tiers: the transformer tier's candidates are re-scored too
)

pytestmark = pytest.mark.model

QUERY = "evict the oldest entry when the cache is full"


@pytest.fixture
def encoder(settings: Settings, static_ready: None) -> StaticEncoder:
    emb = shared_embedder(settings, tiers.STATIC)  # the default static model, from the machine's model cache
    assert emb.load(), emb.unavailable_reason
    return emb.static_encoder()


def test_f_is_the_f1_of_the_query_and_the_documents_best_matches(
    encoder: StaticEncoder,
) -> None:
    same, partial, unrelated, empty = texts_f1(
        encoder, QUERY, [QUERY, "the cache entry", "latitude longitude distance", ""]
    )
    assert same == pytest.approx(1.0, abs=1e-5)  # every query token finds itself
    assert unrelated < partial < same
    assert empty == 0.0  # no counted tokens: nothing to match
    assert list(texts_f1(encoder, "  ", ["anything"])) == [0.0]
    assert len(texts_f1(encoder, QUERY, [])) == 0
    # By hand: F1 of the query tokens' best cosines (weighted by their rows' norms) and the document's distinct
    # tokens' best cosines (evenly).
    (q_ids,) = encoder.token_ids([QUERY])
    (d_ids,) = encoder.token_ids(["the cache entry"])
    q_ids, q_counts = np.unique(q_ids, return_counts=True)
    unit = encoder.vectors / np.maximum(np.linalg.norm(encoder.vectors, axis=1), 1e-12)[:, None]
    pair = unit[q_ids] @ unit[np.unique(d_ids)].T
    weights = np.linalg.norm(encoder.vectors[q_ids], axis=1) * q_counts
    recall, precision = float(pair.max(axis=1) @ weights / weights.sum()), float(pair.max(axis=0).mean())
    assert partial == pytest.approx(2 * recall * precision / (recall + precision), abs=1e-5)


def test_the_leg_rescores_its_candidates_and_says_so(
    settings: Settings, serve: Serve, static_ready: None
) -> None:
    plain = replace(settings, vector_tiers="static", static_query_weight=0.0, late_interaction_weight=0.0)
    weight = 2.0  # large, so the order visibly follows the tokens
    answers, encoder = {}, None
    for name, s in (("plain", plain), ("rescored", replace(plain, late_interaction_weight=weight))):
        servicer = VectorServicer(s, start_worker=False)
        stub = serve(servicer)
        update(stub, "demo", corpus_files(), replace_all=True)
        request = vector_pb2.VectorSearchRequest(
            repositories=["demo"], text=QUERY, limit=7, late_interaction=True
        )
        answers[name] = stub.VectorSearch(request)
        request.late_interaction = False  # only where asked (the orchestrator asks in `semantic` mode)
        assert stub.VectorSearch(request).rescored_by == ""
        encoder = servicer.embedders["static"].static_encoder()
        given = list(map(float, encoder.encode([QUERY])[0]))
        by_vector = stub.VectorSearch(
            vector_pb2.VectorSearchRequest(repositories=["demo"], vector=given, limit=7)
        )
        assert by_vector.rescored_by == ""  # a caller's vector has no words to match: the cosines alone
    assert encoder is not None
    before, after = answers["plain"], answers["rescored"]
    assert before.rescored_by == "" and after.rescored_by.startswith(
        "token late interaction (F1 of MaxSim) over "
    )
    share = late_interaction.HEAD_SHARE
    assert after.rescored_by.endswith(f"at weight 2, cosine {1 - share:g} whole + {share:g} head")
    assert after.model in after.rescored_by
    cosine = {(h.location.path, h.location.start_line): h.score for h in before.hits}
    assert {(h.location.path, h.location.start_line) for h in after.hits} == set(
        cosine
    )  # the same candidates, re-scored
    assert [h.score for h in after.hits] == sorted((h.score for h in after.hits), reverse=True)
    texts = {
        (c.path, c.start_line): doc_text(c.path, c.text, list(c.breadcrumb), c.symbol)
        for f in corpus_files()
        for c in f.chunks
    }
    query = encoder.encode([QUERY])[0]  # the static tier's own query (the boost is off here)
    for h in after.hits:
        at = (h.location.path, h.location.start_line)
        late = float(texts_f1(encoder, QUERY, [texts[at]])[0])
        head = float(encoder.encode([document_head(texts[at])])[0] @ query)  # the candidate's first lines
        expected = (1 - share) * cosine[at] + share * head + weight * late
        assert h.score == pytest.approx(expected, abs=1e-4), at
    assert after.hits[0].location.path == "cache/lru.py"


def test_the_setting_refuses_what_it_cannot_use() -> None:
    assert Settings.from_env({}).late_interaction_weight == 1.0
    assert Settings.from_env({"CODESEARCH_LATE_INTERACTION_WEIGHT": "0"}).late_interaction_weight == 0.0
    for bad in ("-0.5", "abc", "nan", "inf"):
        with pytest.raises(ConfigError, match="CODESEARCH_LATE_INTERACTION_WEIGHT must be a number >= 0"):
            Settings.from_env({"CODESEARCH_LATE_INTERACTION_WEIGHT": bad})


def test_the_cli_says_plainly_which_setting_is_wrong(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codesearch.cli.main import main

    monkeypatch.setenv("CODESEARCH_LATE_INTERACTION_WEIGHT", "-1")
    assert main(["status"]) != 0
    err = capsys.readouterr().err
    assert "CODESEARCH_LATE_INTERACTION_WEIGHT must be a number >= 0" in err and "Traceback" not in err


def test_the_transformer_tiers_candidates_are_rescored_with_the_static_tokens(
    settings: Settings, serve: Serve, static_ready: None
) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    update(stub, "demo", corpus_files(), replace_all=True)
    assert _tiers.asyncio.run(servicer.wait_idle("demo", timeout=600))
    query = "how are retries with exponential backoff done"
    out = stub.VectorSearch(
        vector_pb2.VectorSearchRequest(repositories=["demo"], text=query, limit=7, late_interaction=True)
    )
    static, transformer = servicer.embedders["static"], servicer.embedders["transformer"]
    assert out.tier == "transformer" and out.rescored_by.endswith(f"over {static.model_id} at weight 1")
    texts = {
        (c.path, c.start_line): doc_text(c.path, c.text, list(c.breadcrumb), c.symbol)
        for f in corpus_files()
        for c in f.chunks
    }
    q = transformer.encode_query(query)
    for h in out.hits:  # the transformer's cosine plus the static tokens' F, nothing else
        text = texts[(h.location.path, h.location.start_line)]
        late = float(texts_f1(static.static_encoder(), query, [text])[0])
        expected = float(q @ transformer.encode_documents([text])[0]) + late
        assert h.score == pytest.approx(expected, abs=2e-3), h.location.path
    assert out.hits[0].location.path == "net/retry.py"


def test_token_ids_are_cached_by_text_and_bounded(
    settings: Settings, serve: Serve, static_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    servicer = VectorServicer(replace(settings, vector_tiers="static"), start_worker=False)
    stub = serve(servicer)
    update(stub, "demo", corpus_files(), replace_all=True)
    request = vector_pb2.VectorSearchRequest(
        repositories=["demo"], text=QUERY, limit=7, late_interaction=True
    )
    first = stub.VectorSearch(request)
    cache = servicer.late._ids
    assert len(cache) == 7 and all(model == servicer.embedders["static"].model_id for model, _ in cache)
    # Served from the cache: the chunk table is not read again, and the scores are the same.
    reads: list[list[int]] = []  # a read answers nothing, so a cache miss would also drop the re-scoring

    def doc_texts(self: RepoIndex, keys: list[int]) -> dict[int, str]:
        reads.append(keys)
        return {}

    monkeypatch.setattr(RepoIndex, "doc_texts", doc_texts)
    again = stub.VectorSearch(request)
    assert reads == [] and again.rescored_by == first.rescored_by != ""
    assert [(h.location.path, h.score) for h in again.hits] == [
        (h.location.path, h.score) for h in first.hits
    ]
    monkeypatch.undo()
    monkeypatch.setattr(late_interaction, "TOKEN_CACHE_CHUNKS", 3)
    cache.clear()
    assert stub.VectorSearch(request).rescored_by and len(cache) == 3  # the most recently used only
