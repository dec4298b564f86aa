"""Repositories spread over shard servers: index 6 across 3 shards, search all, lose one shard, degrade."""

from __future__ import annotations

from pathlib import Path

import grpc
from codesearch.config import Settings
from codesearch.orchestrator.sharding import rendezvous_shard
from codesearch.server import registrars
from codesearch.v1 import common_pb2, keyword_pb2, keyword_pb2_grpc, search_pb2, search_pb2_grpc

from tests.fixture_types import StartServer

CANDIDATE_NAMES = [f"repo{i}" for i in range(100)]


def names_on_every_shard(addresses: list[str], count: int) -> list[str]:
    """`count` repository names that rendezvous hashing spreads over every shard (ports are random, so a fixed
    list of names lands on one shard about once in a hundred runs)."""
    per_shard: dict[int, list[str]] = {}
    for name in CANDIDATE_NAMES:
        per_shard.setdefault(rendezvous_shard(name, addresses), []).append(name)
    picked = [names[0] for names in per_shard.values()]
    rest = [n for n in CANDIDATE_NAMES if n not in picked]
    return sorted(picked + rest[: count - len(picked)])


def test_rendezvous_is_stable_when_a_shard_is_added() -> None:
    names = [f"r{i}" for i in range(2000)]
    three = ["a:1", "b:1", "c:1"]
    four = [*three, "d:1"]
    before = {n: three[rendezvous_shard(n, three)] for n in names}
    after = {n: four[rendezvous_shard(n, four)] for n in names}
    moved = [n for n in names if before[n] != after[n]]
    assert all(after[n] == "d:1" for n in moved)  # only repositories the new shard wins move
    assert 0.18 < len(moved) / len(names) < 0.32  # about 1/4
    counts = [list(before.values()).count(s) for s in three]
    assert min(counts) > 500  # spread evenly enough


def test_six_repositories_over_three_shards(tmp_path: Path, start_server: StartServer) -> None:
    shards = [
        start_server(
            registrars(
                Settings.from_env({"CODESEARCH_HOME": str(tmp_path / f"shard{i}")}), ("keyword", "graph")
            )
        )
        for i in range(3)
    ]
    addresses = [s.address for s in shards]
    front_settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "front"), "CODESEARCH_SHARDS": ",".join(addresses)}
    )
    front = start_server(registrars(front_settings, ("orchestrator",)))
    repos = names_on_every_shard(addresses, 6)
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(front.address))

    for name in repos:
        root = tmp_path / "src" / name
        root.mkdir(parents=True)
        (root / "main.py").write_text(f'def handler_{name}():\n    return "marker {name} here"\n')
        done = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name=name)))[-1]
        assert done.phase == search_pb2.INDEX_PHASE_DONE and not [
            d for d in done.degraded_legs if "keyword" in d
        ]

    owner = {name: rendezvous_shard(name, addresses) for name in repos}
    assert len(set(owner.values())) == 3  # the data really is spread
    for i, address in enumerate(addresses):
        kw = keyword_pb2_grpc.KeywordServiceStub(grpc.insecure_channel(address))
        held = sorted(s.repository for s in kw.GetKeywordStats(keyword_pb2.GetKeywordStatsRequest()).bm25)
        assert held == sorted(n for n in repos if owner[n] == i)

    def marker_repos() -> tuple[set[str], search_pb2.SearchResponse]:
        resp = stub.Search(
            search_pb2.SearchRequest(
                query="marker", mode=search_pb2.SEARCH_MODE_LITERAL, limit=50, no_cache=True
            )
        )
        return {h.location.repository for h in resp.hits}, resp

    found, _ = marker_repos()
    assert found == set(repos)  # one search over every shard, one fused list

    lost = owner[repos[0]]
    shards[lost].stop()
    found, resp = marker_repos()
    expected = {n for n in repos if owner[n] != lost}
    assert found == expected
    trigram = [r for r in resp.legs if r.leg == common_pb2.LEG_TRIGRAM][0]
    assert trigram.status == common_pb2.LEG_STATUS_DEGRADED
    assert addresses[lost] in trigram.reason


def test_a_sharded_vector_answer_reports_every_shards_tier_and_upgrading() -> None:
    """Merged like the unsharded leg's report: which tier(s) answered, and upgrading when any shard's better tier
    still fills in (so the orchestrator does not cache it)."""
    from codesearch.orchestrator.sharding import merge_responses
    from codesearch.v1 import vector_pb2

    def answer(tier: str, upgrading: bool, score: float) -> vector_pb2.VectorSearchResponse:
        hit = common_pb2.Hit(score=score)
        return vector_pb2.VectorSearchResponse(
            hits=[hit], tier=tier, model=f"m-{tier}", upgrading=upgrading, embedded=5, total=5
        )

    same = merge_responses([answer("static", False, 0.2), answer("static", True, 0.9)])
    assert (same.tier, same.model, same.upgrading, same.embedded) == ("static", "m-static", True, 10)
    assert [h.score for h in same.hits] == [0.9, 0.2]
    mixed = merge_responses([answer("transformer", False, 0.5), answer("static", False, 0.4)])
    assert (mixed.tier, mixed.model, mixed.upgrading) == (
        "transformer+static",
        "m-transformer+m-static",
        False,
    )
