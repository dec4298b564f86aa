"""Leg dumps (eval/polyglot_run.py) record what the server's legs are asked, so the offline replay equals it."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from codesearch.config import Settings
from codesearch.eval.polyglot import PolyQuery
from codesearch.eval.polyglot_run import asked_names, dump_legs, vector_available, write_jsonl
from codesearch.v1 import search_pb2, search_pb2_grpc
from codesearch_lab.offline import Variant, load_legs, rank_one

from tests.fixture_types import StartServer

from .test_mine import write_repo

server_mod = pytest.importorskip("codesearch.server")
pytest.importorskip("codesearch._native")  # the keyword leg needs the Rust extension

SERVICES = ("keyword", "graph", "orchestrator")


def test_a_phrased_definition_question_is_dumped_with_the_routers_target(
    tmp_path: Path, start_server: StartServer
) -> None:
    root = write_repo(tmp_path / "repo")
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(server_mod.registrars(settings, SERVICES))
    channel = grpc.insecure_channel(server.address)
    stub = search_pb2_grpc.SearchServiceStub(channel)
    progress = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="tiny")))
    assert progress[-1].phase == search_pb2.INDEX_PHASE_DONE
    # "stop" is no identifier-looking name (query_names skips it); the server asks its definition leg for it.
    query = "where is stop defined"
    assert "stop" in asked_names(query) and asked_names("compute_total") == ["compute_total"]
    dump = tmp_path / "legs.jsonl"
    write_jsonl(dump, dump_legs(channel, [PolyQuery("tiny", "q", query, "symbol", ())], with_vector=False))
    (legs,) = load_legs(dump)
    assert [d.location.path for d in legs.definitions] == ["pkg/core.py"]
    served = stub.Search(search_pb2.SearchRequest(query=query, repositories=["tiny"]))
    replayed = rank_one(legs, Variant("routed", routed=True, k=40.0))
    assert served.strategy == search_pb2.STRATEGY_DIRECT  # one structural leg answered
    place = (served.hits[0].location.path, served.hits[0].location.start_line)
    assert (
        (replayed[0].hit.location.path, replayed[0].hit.location.start_line) == place == ("pkg/core.py", 11)
    )


def test_vector_available_waits_out_a_loading_model_and_not_a_broken_or_absent_one(
    tmp_path: Path, start_server: StartServer
) -> None:
    """Read while a just-started server still loads its model, "unavailable" would skip the embedding wait and
    dump no vector list; a model that cannot load, or no vector leg at all, answers False at once."""
    home = {"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_VECTOR_TIERS": "static"}
    loading = start_server(server_mod.registrars(Settings.from_env(home), ("vector", "orchestrator")))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(loading.address))
    assert vector_available(stub)  # asked the moment it started: waited for the static model
    broken = {**home, "CODESEARCH_STATIC_MODEL": str(tmp_path / "no-such-model")}
    server = start_server(server_mod.registrars(Settings.from_env(broken), ("vector", "orchestrator")))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    t0 = time.perf_counter()
    assert not vector_available(stub, loading_wait_s=120)
    assert time.perf_counter() - t0 < 60  # it gave up when the reason turned from loading to broken
    absent = start_server(server_mod.registrars(Settings.from_env(home), SERVICES))
    assert not vector_available(search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(absent.address)))
