"""VectorService's transformer tier alone, against a real model and real usearch indexes, over real gRPC.

The static tier and the two tiers together are tested in test_vector_tiers.py; the repositories that the tests of
opening while deleted index use the static tier only because it is the quicker."""

from __future__ import annotations

import ast
import hashlib
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import grpc
import numpy as np
import pytest
from codesearch.common.index_update import update_messages
from codesearch.common.models.lookup import resolve_model_path
from codesearch.common.snapshot import SnapshotDir
from codesearch.config import Settings
from codesearch.v1 import common_pb2, vector_pb2, vector_pb2_grpc
from codesearch.vector import service, store, tier_index
from codesearch.vector.chunk_table import ChunkMeta, TableMeta
from codesearch.vector.embedder import Embedder
from codesearch.vector.service import VectorServicer, add_servicer
from codesearch.vector.tier_index import vectors_file_name

from tests.fixture_types import StartServer

pytestmark = pytest.mark.model


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The transformer tier alone: its progressive embedding, cache and restart are what these tests check."""
    return replace(settings, vector_tiers="transformer")


CORPUS: dict[str, str] = {
    "net/retry.py": '''
        import random
        import time


        def call_with_retries(func, attempts=5, base_delay=0.1):
            """Call func until it succeeds, sleeping longer after each failure."""
            for attempt in range(attempts):
                try:
                    return func()
                except ConnectionError:
                    if attempt == attempts - 1:
                        raise
                    delay = base_delay * (2 ** attempt)
                    time.sleep(delay + random.uniform(0, delay / 2))
        ''',
    "conf/loader.py": '''
        def load_settings(path):
            """Read an ini-style configuration file into a dict."""
            settings = {}
            with open(path) as fh:
                for line in fh:
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    key, _, value = line.partition("=")
                    settings[key.strip()] = value.strip()
            return settings
        ''',
    "auth/passwords.py": '''
        import hashlib
        import os


        def hash_password(password, salt=None):
            """Derive a salted PBKDF2 digest of a password for storage."""
            salt = salt or os.urandom(16)
            digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000)
            return salt.hex() + ":" + digest.hex()
        ''',
    "cache/lru.py": '''
        from collections import OrderedDict


        class LRUCache:
            """A bounded mapping that forgets the least recently used entry."""

            def __init__(self, capacity):
                self.capacity = capacity
                self.items = OrderedDict()

            def get(self, key):
                if key not in self.items:
                    return None
                self.items.move_to_end(key)
                return self.items[key]

            def put(self, key, value):
                self.items[key] = value
                self.items.move_to_end(key)
                if len(self.items) > self.capacity:
                    self.items.popitem(last=False)
        ''',
    "geo/distance.go": """
        package geo

        import "math"

        // Haversine returns the great-circle distance in kilometres between two points on Earth.
        func Haversine(lat1, lon1, lat2, lon2 float64) float64 {
            const earthRadiusKm = 6371.0
            dLat := (lat2 - lat1) * math.Pi / 180
            dLon := (lon2 - lon1) * math.Pi / 180
            a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*math.Pi/180)*math.Cos(lat2*math.Pi/180)*math.Sin(dLon/2)*math.Sin(dLon/2)
            return earthRadiusKm * 2 * math.Atan2(math.Sqrt(a), math.Sqrt(1-a))
        }
        """,
}

QUERIES = {
    "how are retries with exponential backoff done": "net/retry.py",
    "compute how far apart two latitude longitude coordinates are": "geo/distance.go",
    "securely store a user's secret credential": "auth/passwords.py",
    "read key value pairs from a settings file": "conf/loader.py",
    "evict the oldest entry when the cache is full": "cache/lru.py",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def indexed_file(path: str, source: str) -> common_pb2.IndexedFile:
    """Chunks at definitions (methods of a class separately, with their breadcrumb), like the real chunker."""
    source = textwrap.dedent(source).lstrip("\n")
    lines = source.splitlines()
    lang = "go" if path.endswith(".go") else "python"
    spans: list[tuple[int, int, list[str], str]] = []
    if lang == "python":
        for node in ast.parse(source).body:
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef):
                        spans.append(
                            (sub.lineno, sub.end_lineno or sub.lineno, [node.name, sub.name], sub.name)
                        )
            elif isinstance(node, ast.FunctionDef):
                spans.append((node.lineno, node.end_lineno or node.lineno, [node.name], node.name))
    else:
        spans.append((1, len(lines), ["Haversine"], "Haversine"))
    chunks = []
    for start, end, crumbs, symbol in spans:
        text = "\n".join(lines[start - 1 : end])
        chunks.append(
            common_pb2.Chunk(
                path=path,
                start_line=start,
                end_line=end,
                language=lang,
                content_hash=sha(text),
                text=text,
                breadcrumb=crumbs,
                symbol=symbol,
            )
        )
    return common_pb2.IndexedFile(
        path=path, language=lang, content_hash=sha(source), content=source.encode(), chunks=chunks
    )


def corpus_files(corpus: dict[str, str] = CORPUS) -> list[common_pb2.IndexedFile]:
    return [indexed_file(p, s) for p, s in corpus.items()]


def update(
    stub: vector_pb2_grpc.VectorServiceStub,
    repo: str,
    files: list,
    deleted: list[str] | None = None,
    replace_all: bool = False,
    version: int = 1,
) -> vector_pb2.UpdateVectorIndexResponse:
    msgs = update_messages(
        vector_pb2.UpdateVectorIndexRequest, repo, files, deleted or [], replace_all, version
    )
    return stub.UpdateVectorIndex(iter(msgs))


Serve = Callable[[VectorServicer], vector_pb2_grpc.VectorServiceStub]
"""The `serve` fixture: serve(servicer) -> a stub of a real server hosting it."""


@pytest.fixture
def serve(start_server: StartServer) -> Iterator[Serve]:
    """serve(servicer) -> stub on a real server; servicers are closed at teardown."""
    servicers: list[VectorServicer] = []
    channels: list[grpc.Channel] = []

    def run(servicer: VectorServicer) -> vector_pb2_grpc.VectorServiceStub:
        servicers.append(servicer)
        server = start_server([lambda s: add_servicer(s, servicer)])
        channel = grpc.insecure_channel(server.address)
        channels.append(channel)
        return vector_pb2_grpc.VectorServiceStub(channel)

    yield run
    for c in channels:
        c.close()
    for s in servicers:
        s.close()


def wait_idle(stub_server: VectorServicer, repo: str) -> None:
    import asyncio

    assert asyncio.run(stub_server.wait_idle(repo, timeout=600))  # generous: 2 shared cores can be saturated


def test_paraphrase_queries_find_the_right_chunk(settings: Settings, serve: Serve) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    resp = update(stub, "demo", corpus_files(), replace_all=True)
    assert resp.result.chunks_total == 7 and resp.result.files_upserted == 5
    wait_idle(servicer, "demo")
    for query, path in QUERIES.items():
        out = stub.VectorSearch(vector_pb2.VectorSearchRequest(repositories=["demo"], text=query, limit=3))
        assert out.hits[0].location.path == path, (query, [h.location.path for h in out.hits])
        assert not out.partial and out.embedded == out.total == 7
    top = stub.VectorSearch(
        vector_pb2.VectorSearchRequest(text="retry with exponential backoff", limit=10)
    ).hits[0]
    assert top.location.repository == "demo" and top.symbol == "call_with_retries"
    assert list(top.breadcrumb) == ["call_with_retries"] and top.language == "python"
    assert top.found_by == [common_pb2.LEG_VECTOR] and top.leg_scores[0].leg == common_pb2.LEG_VECTOR
    assert 0.2 < top.score <= 1.0 and top.leg_scores[0].score == pytest.approx(top.score)
    assert top.snippet.startswith("def call_with_retries(")
    go = stub.VectorSearch(
        vector_pb2.VectorSearchRequest(text="retry with backoff", limit=10, languages=["go"])
    )
    assert [h.location.path for h in go.hits] == ["geo/distance.go"]
    # a method chunk carries its class in the breadcrumb
    lru = stub.VectorSearch(
        vector_pb2.VectorSearchRequest(text="store a value, drop the least recent", limit=1)
    )
    assert list(lru.hits[0].breadcrumb) == ["LRUCache", "put"]
    # searching by vector gives the same ranking as by text
    vec = stub.Embed(
        vector_pb2.EmbedRequest(texts=["how are retries with exponential backoff done"], is_query=True)
    )
    by_vec = stub.VectorSearch(vector_pb2.VectorSearchRequest(vector=vec.embeddings[0].values, limit=3))
    assert by_vec.hits[0].location.path == "net/retry.py"
    assert np.linalg.norm(vec.embeddings[0].values) == pytest.approx(1.0, abs=1e-4)
    stats = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest())
    assert stats.dimensions == 384 and stats.unavailable_reason == "" and stats.backend == "onnx"
    (demo,) = stats.repositories
    assert (demo.repository, demo.files, demo.items, demo.pending) == (
        "demo",
        5,
        7,
        0,
    ) and demo.disk_bytes > 0


def test_reindex_embeds_only_changed_chunks_and_restart_resumes(
    settings: Settings, serve: Serve, tmp_path: Path
) -> None:
    first = VectorServicer(settings, start_worker=False)  # nothing embeds: the state after a crash mid-way
    stub = serve(first)
    assert update(stub, "demo", corpus_files(), replace_all=True).pending == 7
    partial = stub.VectorSearch(vector_pb2.VectorSearchRequest(text="backoff", limit=5))
    assert partial.partial and partial.embedded == 0 and partial.total == 7 and not partial.hits
    first.close()

    second = VectorServicer(settings)  # a restart: the worker finds the pending chunks on disk
    stub = serve(second)
    wait_idle(second, "demo")
    assert second.embedded_by_model == 7
    assert (
        stub.GetVectorStats(vector_pb2.GetVectorStatsRequest(repositories=["demo"])).repositories[0].pending
        == 0
    )

    edited = dict(CORPUS)
    edited["conf/loader.py"] = CORPUS["conf/loader.py"].replace("ini-style", "INI or .env style")
    resp = update(stub, "demo", [indexed_file("conf/loader.py", edited["conf/loader.py"])], version=2)
    assert resp.pending == 1 and resp.result.chunks_total == 7 and resp.result.index_version == 2
    wait_idle(second, "demo")
    assert second.embedded_by_model == 8
    # the whole repository again, unchanged: every vector is reused, nothing goes through the model
    hits_before = second.cache.hits
    assert update(stub, "demo", corpus_files(edited), replace_all=True, version=3).pending == 0
    # and back to the original text: that vector is still in the embedding cache
    assert update(stub, "demo", corpus_files(), replace_all=True, version=4).pending == 0
    assert second.cache.hits - hits_before == 1 and second.embedded_by_model == 8
    second.close()

    third = VectorServicer(settings, start_worker=False)  # opened from disk as a view
    index = third.repo("demo").tiers["transformer"].index
    assert (
        index is not None and index.expansion_search == tier_index.HNSW_EXPANSION_SEARCH
    )  # not usearch's 64
    third.close()


def test_deletes(settings: Settings, serve: Serve) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    update(stub, "demo", corpus_files(), replace_all=True)
    update(stub, "other", corpus_files({"net/retry.py": CORPUS["net/retry.py"]}), replace_all=True)
    resp = update(stub, "demo", [], deleted=["net/retry.py"], version=2)
    assert resp.result.files_deleted == 1 and resp.result.chunks_total == 6
    wait_idle(servicer, "demo")
    wait_idle(servicer, "other")
    hits = stub.VectorSearch(
        vector_pb2.VectorSearchRequest(text="retry with exponential backoff", limit=10)
    ).hits
    assert [(h.location.repository, h.location.path) for h in hits if h.location.path == "net/retry.py"] == [
        ("other", "net/retry.py")
    ]
    assert len(hits) == 7  # 6 in demo + 1 in other, merged by cosine
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # replace_all drops files that are not sent again
    resp = update(
        stub, "demo", corpus_files({"cache/lru.py": CORPUS["cache/lru.py"]}), replace_all=True, version=3
    )
    assert resp.result.files_deleted == 3 and resp.result.chunks_total == 3
    assert stub.DeleteVectorRepository(vector_pb2.DeleteVectorRepositoryRequest(repository="demo")).deleted
    assert not stub.DeleteVectorRepository(
        vector_pb2.DeleteVectorRepositoryRequest(repository="demo")
    ).deleted
    with pytest.raises(grpc.RpcError) as e:
        stub.VectorSearch(vector_pb2.VectorSearchRequest(repositories=["demo"], text="retry", limit=3))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    left = stub.VectorSearch(vector_pb2.VectorSearchRequest(text="retry", limit=10)).hits
    assert {h.location.repository for h in left} == {"other"}


def test_model_change_rebuilds_the_index(settings: Settings, serve: Serve) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    update(stub, "demo", corpus_files(), replace_all=True)
    wait_idle(servicer, "demo")
    servicer.close()
    old_gen = servicer.repo("demo").gen
    assert old_gen is not None
    old_file = old_gen / vectors_file_name("all-MiniLM-L6-v2")
    assert old_file.exists()

    # The same weights, named by path: another model id, so its vectors must not be mixed with the old ones.
    path, _ = resolve_model_path("all-MiniLM-L6-v2")
    changed = VectorServicer(replace(settings, embed_model=path), start_worker=False)
    repo = changed.repo("demo")
    assert repo.model_changed_from == old_file.name and not old_file.exists()
    assert repo.pending == 7 and repo.tiers["transformer"].index is None
    stub = serve(changed)
    changed.start()
    wait_idle(changed, "demo")
    assert changed.embedded_by_model == 7  # the cache is per model: nothing reused
    out = stub.VectorSearch(vector_pb2.VectorSearchRequest(text="retries with exponential backoff", limit=1))
    assert out.hits[0].location.path == "net/retry.py" and not out.partial
    assert repo.gen is not None and (repo.gen / vectors_file_name(path)).exists()


def code(call: Callable[[], object]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code()


def test_bad_input(settings: Settings, serve: Serve) -> None:
    servicer = VectorServicer(settings)
    stub = serve(servicer)
    update(stub, "demo", corpus_files({"net/retry.py": CORPUS["net/retry.py"]}), replace_all=True)
    search = stub.VectorSearch
    req = vector_pb2.VectorSearchRequest
    bad = grpc.StatusCode.INVALID_ARGUMENT
    assert code(lambda: search(req(text="", limit=5))) == bad
    assert code(lambda: search(req(text="   ", limit=5))) == bad
    assert code(lambda: search(req(text="retry", limit=0))) == bad
    assert code(lambda: search(req(text="retry", limit=-1))) == bad
    assert code(lambda: search(req(text="retry", limit=1001))) == bad
    assert code(lambda: search(req(text="retry", vector=[0.1] * 384, limit=5))) == bad
    assert code(lambda: search(req(vector=[0.1] * 383, limit=5))) == bad
    assert code(lambda: search(req(vector=[0.0] * 384, limit=5))) == bad
    assert code(lambda: search(req(repositories=["../etc"], text="retry", limit=5))) == bad
    assert (
        code(lambda: search(req(repositories=["nope"], text="retry", limit=5))) == grpc.StatusCode.NOT_FOUND
    )
    stats = vector_pb2.GetVectorStatsRequest(repositories=["nope"])
    assert code(lambda: stub.GetVectorStats(stats)) == grpc.StatusCode.NOT_FOUND
    assert code(lambda: stub.Embed(vector_pb2.EmbedRequest())) == bad
    assert code(lambda: stub.Embed(vector_pb2.EmbedRequest(texts=["x"] * 257))) == bad
    # a stream without a commit changes nothing
    msgs = update_messages(
        vector_pb2.UpdateVectorIndexRequest, "demo", corpus_files(), ["net/retry.py"], True, 9
    )
    assert code(lambda: stub.UpdateVectorIndex(iter(msgs[:-1]))) == bad
    (demo,) = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest(repositories=["demo"])).repositories
    assert demo.items == 1 and demo.index_version == 1


def test_unloadable_model_answers_unavailable_and_the_server_stays_up(
    settings: Settings, serve: Serve, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-model")
    servicer = VectorServicer(replace(settings, embed_model=missing))
    stub = serve(servicer)
    assert servicer.embedder.wait_loaded(60)
    stats = stub.GetVectorStats(vector_pb2.GetVectorStatsRequest())
    assert missing in stats.unavailable_reason and "cannot be loaded" in stats.unavailable_reason
    # updates still commit; their chunks wait for a model
    assert update(stub, "demo", corpus_files(), replace_all=True).pending == 7
    with pytest.raises(grpc.RpcError) as e:
        stub.VectorSearch(vector_pb2.VectorSearchRequest(text="retry", limit=3))
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE and missing in (e.value.details() or "")
    assert code(lambda: stub.Embed(vector_pb2.EmbedRequest(texts=["retry"]))) == grpc.StatusCode.UNAVAILABLE
    assert stub.GetVectorStats(vector_pb2.GetVectorStatsRequest()).repositories[0].pending == 7


@pytest.fixture
def two_repos(settings: Settings, serve: Serve) -> vector_pb2_grpc.VectorServiceStub:
    """A repository deleted while a request for every repository opens it is skipped, as one deleted before the
    listing is; a broken index still says so (as in the keyword and graph legs). Two repositories indexed by the
    static tier, then a fresh servicer that has opened neither (no worker)."""
    settings = replace(settings, vector_tiers="static")
    emb = Embedder(settings.static_model, "model2vec", model_cache=settings.model_cache)
    assert emb.load(), emb.unavailable_reason  # distilled once per machine, then found in the model cache
    writer = VectorServicer(settings)
    writer_stub = serve(writer)
    for repo in ("kept", "cut"):
        files = [indexed_file("a.py", f"def {repo}_marker():\n    return 1\n")]
        assert update(writer_stub, repo, files, replace_all=True).pending == 0
    writer.close()
    return serve(VectorServicer(settings, start_worker=False))


def listed(stub: vector_pb2_grpc.VectorServiceStub) -> set[str]:
    return {
        r.repository for r in stub.GetVectorStats(vector_pb2.GetVectorStatsRequest(), timeout=30).repositories
    }


def test_a_repository_deleted_while_it_is_opened_is_skipped(
    two_repos: vector_pb2_grpc.VectorServiceStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_read = store.read_table

    def read_while_deleted(generation: Path) -> tuple[TableMeta, dict[int, ChunkMeta]]:
        if generation.parent.name == "cut":  # a DeleteRepository lands between CURRENT's read and the open
            SnapshotDir(generation.parent).delete()
        return real_read(generation)

    monkeypatch.setattr(store, "read_table", read_while_deleted)
    assert listed(two_repos) == {"kept"}  # it was an INTERNAL error: the table file had gone
    with pytest.raises(grpc.RpcError) as e:
        two_repos.GetVectorStats(vector_pb2.GetVectorStatsRequest(repositories=["cut"]), timeout=30)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_broken_index_is_still_an_error(
    two_repos: vector_pb2_grpc.VectorServiceStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(root: Path, *args: object) -> NoReturn:
        raise ValueError("truncated vector table")

    monkeypatch.setattr(service, "RepoIndex", broken)
    with pytest.raises(grpc.RpcError) as e:
        listed(two_repos)
    assert e.value.code() == grpc.StatusCode.INTERNAL  # not skipped: it is still indexed
    # ... and it can be deleted: deleting does not open it.
    gone = two_repos.DeleteVectorRepository(
        vector_pb2.DeleteVectorRepositoryRequest(repository="kept"), timeout=30
    )
    assert gone.deleted
