"""Centrality on incremental updates: a small update carries scores over, a large or stale one recomputes PageRank."""

from __future__ import annotations

import pytest
from codesearch.graph.centrality_update import SMALL_UPDATE_FRACTION, STALE_FRACTION_LIMIT
from codesearch.v1 import graph_pb2_grpc

from tests.graph.test_service import R, index, stub  # noqa: F401  (stub is the fixture)

N_CALLERS = 150  # enough files that one edited file is under SMALL_UPDATE_FRACTION of the repository


def caller(i: int, target: str = "compute_price") -> str:
    return f"from shop import pricing\n\ndef caller_{i}():\n    return pricing.{target}([])\n"


def repository() -> dict[str, str]:
    repo = {
        "shop/__init__.py": "",
        "shop/pricing.py": (
            "def compute_price(items):\n    return apply_tax(sum(items))\n\n"
            "def apply_tax(x):\n    return x * 1.2\n\n"
            "def discount(x):\n    return x\n"
        ),
    }
    repo.update({f"shop/caller_{i}.py": caller(i) for i in range(N_CALLERS)})
    return repo


def score(stub: graph_pb2_grpc.GraphServiceStub, name: str) -> float:  # noqa: F811
    symbols = stub.FindDefinitions(R.FindDefinitionsRequest(name=name)).symbols
    assert len(symbols) == 1, name
    return symbols[0].centrality


def scores(stub: graph_pb2_grpc.GraphServiceStub) -> dict[str, float]:  # noqa: F811
    names = ["compute_price", "apply_tax", "discount"] + [f"caller_{i}" for i in range(N_CALLERS)]
    return {n: score(stub, n) for n in names}


def test_one_file_update_keeps_scores_and_answers_for_the_edited_file(
    stub: graph_pb2_grpc.GraphServiceStub,  # noqa: F811
) -> None:
    assert len(repository()) * SMALL_UPDATE_FRACTION >= 1
    index(stub, repository())
    before = scores(stub)
    edited = "from shop import pricing\n\ndef caller_3():\n    return pricing.discount(1)\n\ndef brand_new():\n    pass\n"
    index(stub, {"shop/caller_3.py": edited}, replace_all=False, version=2)
    after = scores(stub)
    assert after == before  # unchanged nodes keep their score; the replaced def keeps its old one
    assert score(stub, "brand_new") == 1.0  # a new node gets the mean (scores are normalised to mean 1)
    # the edited file's definitions and calls are current even though PageRank was not rerun
    d = stub.FindDefinitions(R.FindDefinitionsRequest(name="brand_new")).symbols
    assert [(s.location.path, s.location.start_line) for s in d] == [("shop/caller_3.py", 6)]
    refs = stub.FindReferences(R.FindReferencesRequest(name="discount")).references
    assert [(x.location.path, x.caller) for x in refs] == [("shop/caller_3.py", "caller_3")]
    refs = stub.FindReferences(R.FindReferencesRequest(name="compute_price", limit=500)).references
    assert "shop/caller_3.py" not in {x.location.path for x in refs} and len(refs) == N_CALLERS - 1


def full_scores(stub: graph_pb2_grpc.GraphServiceStub, repo: dict[str, str]) -> dict[str, float]:  # noqa: F811
    index(stub, repo, version=99)
    return scores(stub)


def test_large_update_recomputes(stub: graph_pb2_grpc.GraphServiceStub) -> None:  # noqa: F811
    repo = repository()
    index(stub, repo)
    before = scores(stub)
    n_edit = int(len(repo) * SMALL_UPDATE_FRACTION) + 1  # just over the small-update limit
    changed = {f"shop/caller_{i}.py": caller(i, "discount") for i in range(n_edit)}
    index(stub, changed, replace_all=False, version=2)
    after = scores(stub)
    assert after["discount"] > before["discount"]  # its new callers count: PageRank was rerun
    assert after == pytest.approx(full_scores(stub, repo | changed))


def test_small_updates_recompute_once_staleness_accumulates(stub: graph_pb2_grpc.GraphServiceStub) -> None:  # noqa: F811
    repo = repository()
    index(stub, repo)
    first = scores(stub)
    limit = int(len(repo) * STALE_FRACTION_LIMIT)
    for i in range(limit):  # each edit is small and staleness stays within the limit: scores are carried
        repo[f"shop/caller_{i}.py"] = caller(i, "discount")
        index(stub, {f"shop/caller_{i}.py": repo[f"shop/caller_{i}.py"]}, replace_all=False, version=2 + i)
    assert scores(stub) == first
    repo[f"shop/caller_{limit}.py"] = caller(limit, "discount")
    index(stub, {f"shop/caller_{limit}.py": repo[f"shop/caller_{limit}.py"]}, replace_all=False, version=50)
    after = scores(stub)
    assert after["discount"] > first["discount"]
    assert after == pytest.approx(full_scores(stub, repo))
