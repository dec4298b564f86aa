"""The vector leg's two tiers: static vectors inside the update, the transformer's in the background, one tier
per query, and the embedding cache shared between data homes. Real models, real usearch indexes, real gRPC."""

from __future__ import annotations

import asyncio
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from codesearch.common.doc_text import doc_text
from codesearch.config import Settings
from codesearch.v1 import vector_pb2, vector_pb2_grpc
from codesearch.vector import tiers
from codesearch.vector.embedder import Embedder
from codesearch.vector.query_boost import BOOSTED_MARK
from codesearch.vector.service import VectorServicer
from codesearch.vector.static_model import (
    StaticEncoder,
    ensure_distilled,
    is_static_model_dir,
    static_model_id,
)

from tests.vector import test_vector_service as _service_tests  # its corpus, helpers and the fixture serve
from tests.vector.test_vector_service import Serve

CORPUS, QUERIES = _service_tests.CORPUS, _service_tests.QUERIES
corpus_files, indexed_file, update = (
    _service_tests.corpus_files,
    _service_tests.indexed_file,
    _service_tests.update,
)
serve = _service_tests.serve  # the fixture

pytestmark = pytest.mark.model


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Both tiers, as `CODESEARCH_VECTOR_TIERS=static,transformer` asks (the default is the static tier alone)."""
    return replace(settings, vector_tiers="static,transformer")


@pytest.fixture(scope="module")
def static_ready() -> None:
    """The default static model made from the bundled MiniLM into the machine's model cache (distilled once per
    machine: ~1-2 minutes the first time, then found there; the shipped delta applied to it in a second)."""
    emb = Embedder(
        Settings.from_env({}).static_model, "model2vec", model_cache=Settings.from_env({}).model_cache
    )
    assert emb.load(), emb.unavailable_reason


def wait_idle(servicer: VectorServicer, repo: str) -> None:
    assert asyncio.run(servicer.wait_idle(repo, timeout=600))


def search(
    stub: vector_pb2_grpc.VectorServiceStub, query: str, limit: int = 3
) -> vector_pb2.VectorSearchResponse:
    return stub.VectorSearch(vector_pb2.VectorSearchRequest(repositories=["demo"], text=query, limit=limit))


def test_tier_choice() -> None:
    assert tiers.parse_tiers("transformer, static") == ("static", "transformer")
    with pytest.raises(ValueError, match="subset of static, transformer"):
        tiers.parse_tiers("static,gpu")
    done, half = {"static": (10, 10), "transformer": (10, 10)}, {"static": (10, 10), "transformer": (5, 10)}
    assert tiers.answering_tier([done], tiers.TIERS) == "transformer"
    assert tiers.answering_tier([done, half], tiers.TIERS) == "static"  # one tier for every repository
    assert tiers.answering_tier([{"static": (3, 10), "transformer": (5, 10)}], tiers.TIERS) == "transformer"
    assert tiers.answering_tier([half], ("transformer",)) == "transformer"


TINY_VOCAB = [
    "remove",
    "a",
    "temporary",
    "folder",
    "directory",
    "clean",
    "up",
    "files",
    "cache",
    "http",
    "cookie",
    "header",
    "parse",
    "retry",
]


def test_a_tiny_transformer_is_distilled_offline(tmp_path: Path) -> None:
    """The distillation path end to end (child process, ONNX export, lock, atomic rename) on a 2-layer BERT
    with a 30-token vocabulary made here, so it takes seconds."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    source = tmp_path / "tiny-bert"
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {
        t: i for i, t in enumerate(specials + TINY_VOCAB + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"])
    }
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    fast.save_pretrained(source)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    BertModel(config).save_pretrained(source)
    made = ensure_distilled(str(source), tmp_path / "model-cache")
    assert is_static_model_dir(made) and ensure_distilled(str(source), tmp_path / "model-cache") == made
    enc = StaticEncoder(str(made))
    vecs = enc.encode(["remove a temporary folder", "http cookie", "zzz"])
    assert vecs.shape == (3, 32) and np.allclose(np.linalg.norm(vecs[:2], axis=1), 1.0, atol=1e-5)
    assert not vecs[2].any()  # only unknown tokens: a zero vector, which matches nothing


def test_searchable_semantically_right_after_indexing(
    settings: Settings, serve: Serve, static_ready: None
) -> None:
    servicer = VectorServicer(settings, start_worker=False)  # no background work at all
    stub = serve(servicer)
    resp = update(stub, "demo", corpus_files(), replace_all=True)
    assert resp.pending == 7  # the transformer's work left; the static tier is complete already
    found = 0
    for query, path in QUERIES.items():
        out = search(stub, query)
        assert out.tier == "static" and not out.partial and out.embedded == out.total == 7
        assert out.model == static_model_id(settings.static_model)
        found += out.hits[0].location.path == path
    assert found >= 4, found  # measured: 5 of 5 with the distilled MiniLM
    stats = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest())
    assert [t.tier for t in stats.tiers] == ["static", "transformer"]
    by_tier = {t.tier: t for t in stats.repository_tiers}
    assert by_tier["static"].answering and by_tier["static"].embedded == 7
    assert by_tier["static"].memory_bytes > 0 and by_tier["transformer"].embedded == 0
    assert "answers from static" in stats.repositories[0].detail


def test_transformer_takes_over_and_a_query_never_mixes_tiers(
    settings: Settings, serve: Serve, static_ready: None
) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    static = servicer.embedders["static"]
    transformer = servicer.embedders["transformer"]
    texts = {}
    for f in corpus_files():
        for c in f.chunks:
            texts[(c.path, c.start_line)] = doc_text(c.path, c.text, list(c.breadcrumb), c.symbol)
    query = "how are retries with exponential backoff done"
    seen: list[vector_pb2.VectorSearchResponse] = []
    stop = threading.Event()

    def keep_searching() -> None:
        while not stop.is_set():
            seen.append(search(stub, query, limit=7))

    update(stub, "demo", corpus_files(), replace_all=True)
    searcher = threading.Thread(target=keep_searching)
    searcher.start()
    try:
        wait_idle(servicer, "demo")
        after = search(stub, query)
    finally:
        stop.set()
        searcher.join()
    assert after.tier == "transformer" and not after.partial and after.hits[0].location.path == "net/retry.py"
    assert seen and {r.tier for r in seen} <= {"static", "transformer"}
    # Every response's scores are its tier's cosines, for every hit: nothing mixed in from the other model. A
    # static answer's query is the static model's, or once the transformer is loaded the boosted one
    # (vector/query_boost.py), as the response says.
    for resp in [seen[0], seen[-1], after]:
        emb = static if resp.tier == "static" else transformer
        boosted = resp.query_boosted
        assert resp.query_encoder == emb.model_id or (boosted and resp.tier == "static"), resp.query_encoder
        if boosted:
            assert servicer.booster is not None
            q = servicer.booster.encode(query)
        else:
            q = emb.encode_query(query)
        for h in resp.hits:
            doc = emb.encode_documents([texts[(h.location.path, h.location.start_line)]])[0]
            assert h.score == pytest.approx(float(q @ doc), abs=2e-3), (resp.tier, h.location.path)
    # An edit: the repository answers from the static tier (complete) until the transformer has it again.
    edited = CORPUS["conf/loader.py"].replace("ini-style", "INI or .env style")
    assert update(stub, "demo", [indexed_file("conf/loader.py", edited)], version=2).pending <= 1
    out = search(stub, "read key value pairs from a settings file")
    assert not out.partial and out.tier in ("static", "transformer")
    wait_idle(servicer, "demo")
    assert search(stub, "read key value pairs from a settings file").tier == "transformer"


def test_the_default_embedding_cache_is_one_per_machine_in_the_model_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()  # the suite gives every test a cache of its own (tests/conftest.py): look at the real default
    env = {"CODESEARCH_MODEL_CACHE": str(tmp_path / "models")}
    homes = [Settings.from_env({**env, "CODESEARCH_HOME": str(tmp_path / h)}) for h in ("a", "b")]
    assert {s.embedding_cache_file() for s in homes} == {tmp_path / "models" / "embeddings.sqlite"}
    named = Settings.from_env({**env, "CODESEARCH_EMBEDDING_CACHE": str(tmp_path / "mine.sqlite")})
    assert named.embedding_cache_file() == tmp_path / "mine.sqlite"


def test_the_embedding_cache_spares_a_second_home_all_model_work(
    settings: Settings, serve: Serve, static_ready: None, tmp_path: Path
) -> None:
    shared = replace(settings, embedding_cache=str(tmp_path / "shared-embeddings.sqlite"))
    first = VectorServicer(shared)
    stub = serve(first)
    update(stub, "demo", corpus_files(), replace_all=True)
    wait_idle(first, "demo")
    assert first.embedded_by_model == 7
    other_home = replace(shared, home=tmp_path / "other-home")
    second = VectorServicer(other_home)
    stub2 = serve(second)
    resp = update(stub2, "demo", corpus_files(), replace_all=True)
    assert resp.pending == 0  # both tiers found every vector in the cache
    wait_idle(second, "demo")
    assert second.embedded_by_model == 0 and second.cache.misses == 0
    assert search(stub2, "how are retries with exponential backoff done").tier == "transformer"


def test_static_only_tier(settings: Settings, serve: Serve, static_ready: None) -> None:
    servicer = VectorServicer(replace(settings, vector_tiers="static"))
    stub = serve(servicer)
    assert update(stub, "demo", corpus_files(), replace_all=True).pending == 0
    out = search(stub, textwrap.dedent("evict the oldest entry when the cache is full"))
    assert out.tier == "static" and out.hits[0].location.path == "cache/lru.py"
    stats = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest())
    assert stats.backend == "model2vec" and stats.dimensions == 256


def test_a_static_only_leg_answers_plain_until_the_transformer_loads_then_boosted(
    settings: Settings, serve: Serve, static_ready: None
) -> None:
    static_only = replace(settings, vector_tiers="static", static_query_weight=0.5)
    servicer = VectorServicer(static_only, start_worker=False)  # the transformer is not loaded yet
    stub = serve(servicer)
    assert list(servicer.embedders) == ["static"] and servicer.booster is not None
    assert update(stub, "demo", corpus_files(), replace_all=True).pending == 0
    query = "how are retries with exponential backoff done"
    request = vector_pb2.VectorSearchRequest(repositories=["demo"], text=query, limit=7)
    first = stub.VectorSearch(request)
    # Never waits for the transformer: the static query answers, and is not to be cached (upgrading).
    assert first.tier == "static" and first.query_encoder == first.model and first.upgrading
    assert not first.query_boosted

    def status_detail() -> str:  # what `codesearch status` prints for the repository
        [repo] = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest()).repositories
        return str(repo.detail)

    assert status_detail().endswith("static queries plain until all-MiniLM-L6-v2 is loaded")
    servicer.start()  # loads the static model, the map, then the transformer for queries
    for _ in range(600):
        if not servicer.booster.pending:
            break
        time.sleep(0.1)
    assert servicer.booster.ready, servicer.booster.off_reason
    boosted = stub.VectorSearch(request)
    assert boosted.tier == "static" and not boosted.upgrading and boosted.query_boosted
    assert boosted.query_encoder == servicer.booster.encoder and BOOSTED_MARK in boosted.query_encoder
    assert boosted.hits[0].location.path == "net/retry.py"
    assert status_detail().endswith("static queries boosted by all-MiniLM-L6-v2 at weight 0.5")
    # What a client asks for with plain_static_query: the static query alone, even now.
    plain = stub.VectorSearch(vector_pb2.VectorSearchRequest(text=query, limit=7, plain_static_query=True))
    assert plain.query_encoder == plain.model and not plain.upgrading and not plain.query_boosted
    # One consistent tier: every score is the boosted query's cosine with the chunk's static vector.
    q = servicer.booster.encode(query)
    texts = {
        (c.path, c.start_line): doc_text(c.path, c.text, list(c.breadcrumb), c.symbol)
        for f in corpus_files()
        for c in f.chunks
    }
    static = servicer.embedders["static"]
    for h in boosted.hits:
        doc = static.encode_documents([texts[(h.location.path, h.location.start_line)]])[0]
        assert h.score == pytest.approx(float(q @ doc), abs=2e-3), h.location.path
    # Weight 0 turns the boost off: the plain static query, nothing pending.
    off = VectorServicer(replace(static_only, static_query_weight=0.0), start_worker=False)
    try:
        assert off.booster is not None
        assert not off.booster.pending and off.booster.off_reason.startswith("off")
        assert off.booster.state == "plain: off (CODESEARCH_STATIC_QUERY_WEIGHT is 0)"
    finally:
        off.close()
