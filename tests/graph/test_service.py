"""GraphService through a real gRPC server: indexing, lookups, references, callees, impact, updates, errors."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import cast

import grpc
import pytest
from codesearch.common.index_update import update_messages
from codesearch.common.snapshot import SnapshotDir
from codesearch.config import Settings
from codesearch.graph import service
from codesearch.graph.service import register
from codesearch.v1 import common_pb2, graph_pb2, graph_pb2_grpc

from tests.fixture_types import StartServer

R = graph_pb2
REPO = {
    "shop/__init__.py": "",
    "shop/models.py": (
        "from shop import pricing\n"
        "\n"
        "class Cart:\n"
        "    def total(self):\n"
        "        return pricing.compute_price(self.items)\n"
        "\n"
        "    def add(self, item):\n"
        "        self.items.append(item)\n"
        "        return self.total()\n"
    ),
    "shop/pricing.py": (
        "import shop.models\n"  # an import cycle with models.py
        "\n"
        "TAX_RATE = 0.2\n"
        "\n"
        "def compute_price(items):\n"
        "    return apply_tax(sum(items))\n"
        "\n"
        "def apply_tax(x):\n"
        "    return x * (1 + TAX_RATE)\n"
    ),
    "app.py": (
        "from shop.models import Cart\n"
        "from shop.pricing import compute_price\n"
        "\n"
        "def checkout(cart):\n"
        "    print(compute_price([1]))\n"
        "    return cart.total()\n"
    ),
}


def files(repo: dict[str, str]) -> list[common_pb2.IndexedFile]:
    return [
        common_pb2.IndexedFile(path=p, language="python", content_hash=hashlib.sha256(s.encode()).hexdigest(),
                               content=s.encode())
        for p, s in repo.items()
    ]  # fmt: skip


@pytest.fixture
def stub(start_server: StartServer, settings: Settings) -> graph_pb2_grpc.GraphServiceStub:
    server = start_server([lambda s: register(s, settings)])
    return graph_pb2_grpc.GraphServiceStub(grpc.insecure_channel(server.address))


def index(stub: graph_pb2_grpc.GraphServiceStub, repo: dict[str, str], replace_all: bool = True,
          deleted: list[str] | None = None, version: int = 1) -> graph_pb2.UpdateGraphIndexResponse:  # fmt: skip
    msgs = update_messages(
        R.UpdateGraphIndexRequest, "shop", files(repo), deleted or [], replace_all, version
    )
    return stub.UpdateGraphIndex(iter(msgs))


def test_find_definitions_exact_case_insensitive_fuzzy_unknown(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    resp = index(stub, REPO)
    assert resp.result.files_upserted == 4 and resp.result.chunks_total == 7 and resp.files_with_errors == 0
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="compute_price"))
    assert r.resolution == R.RESOLUTION_EXACT
    (s,) = r.symbols
    assert (s.location.repository, s.location.path, s.location.start_line, s.location.end_line) == (
        "shop", "shop/pricing.py", 5, 6)  # fmt: skip
    assert (
        s.kind == R.SYMBOL_KIND_FUNCTION
        and s.signature == "def compute_price(items):"
        and s.language == "python"
    )
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="Cart.total"))
    assert r.resolution == R.RESOLUTION_EXACT and r.symbols[0].qualified_name == "Cart.total"
    assert r.symbols[0].kind == R.SYMBOL_KIND_METHOD and r.symbols[0].parent == "Cart"
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="cart"))
    assert r.resolution == R.RESOLUTION_CASE_INSENSITIVE and r.symbols[0].name == "Cart"
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="compute_prise"))
    assert r.resolution == R.RESOLUTION_FUZZY and r.symbols[0].name == "compute_price"
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="price"))
    assert r.resolution == R.RESOLUTION_FUZZY and r.symbols[0].name == "compute_price"
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="zzz_nothing_like_it"))
    assert r.resolution == R.RESOLUTION_NOT_FOUND and not r.symbols
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="TAX_RATE", kind=R.SYMBOL_KIND_FUNCTION))
    assert r.resolution == R.RESOLUTION_NOT_FOUND
    r = stub.FindDefinitions(R.FindDefinitionsRequest(name="TAX_RATE", kind=R.SYMBOL_KIND_CONSTANT))
    assert [s.name for s in r.symbols] == ["TAX_RATE"]


def test_references_and_callees(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    index(stub, REPO)
    r = stub.FindReferences(R.FindReferencesRequest(name="compute_price"))
    assert r.resolution == R.RESOLUTION_EXACT and [t.qualified_name for t in r.targets] == ["compute_price"]
    sites = {(x.location.path, x.location.start_line, x.caller, x.resolution) for x in r.references}
    assert sites == {
        ("shop/models.py", 5, "Cart.total", R.RESOLUTION_EXACT),
        ("app.py", 5, "checkout", R.RESOLUTION_EXACT),
    }
    assert all(x.snippet for x in r.references)
    r = stub.FindReferences(R.FindReferencesRequest(name="Cart.total"))
    assert {(x.location.path, x.location.start_line) for x in r.references} == {
        ("shop/models.py", 9),
        ("app.py", 6),
    }
    r = stub.FindReferences(R.FindReferencesRequest(name="nobody_calls_or_defines_this"))
    assert r.resolution == R.RESOLUTION_NOT_FOUND and not r.references
    r = stub.FindCallees(R.FindCalleesRequest(name="compute_price"))
    assert r.resolution == R.RESOLUTION_EXACT and [s.name for s in r.callees] == ["apply_tax"]
    assert [c.callee_name for c in r.calls] == [
        "apply_tax",
        "sum",
    ]  # unresolved builtins are still call sites
    assert r.calls[1].resolution == R.RESOLUTION_NOT_FOUND


def test_impact_follows_imports_and_calls_and_terminates_on_cycles(
    stub: graph_pb2_grpc.GraphServiceStub,
) -> None:
    index(stub, REPO)
    r = stub.Impact(R.ImpactRequest(target="shop.pricing", max_depth=10))
    assert r.resolution == R.RESOLUTION_EXACT and list(r.resolved_targets) == ["shop/pricing.py"]
    items = {(i.location.path, i.location.start_line, i.distance, i.via) for i in r.items}
    # models imports pricing (1 hop); app imports both (1 hop); the cycle back to pricing is not repeated
    assert items == {("shop/models.py", 1, 1, "imports"), ("app.py", 2, 1, "imports")}
    r = stub.Impact(R.ImpactRequest(target="shop/models.py"))
    assert {(i.location.path, i.distance) for i in r.items} == {("shop/pricing.py", 1), ("app.py", 1)}
    r = stub.Impact(R.ImpactRequest(target="apply_tax", max_depth=3))
    got = {(i.symbol, i.distance, i.via) for i in r.items}
    assert got == {("compute_price", 1, "calls"), ("Cart.total", 2, "calls"), ("checkout", 2, "calls"),
                   ("Cart.add", 3, "calls")}  # fmt: skip
    r = stub.Impact(R.ImpactRequest(target="apply_tax", max_depth=1))
    assert [(i.symbol, i.distance) for i in r.items] == [("compute_price", 1)]
    r = stub.Impact(R.ImpactRequest(target="no_such_thing"))
    assert r.resolution == R.RESOLUTION_NOT_FOUND and not r.items


def test_neighbors_centrality_stats(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    index(stub, REPO, version=7)
    loc = common_pb2.Location(repository="shop", path="shop/models.py", start_line=5, end_line=5)
    r = stub.Neighbors(R.NeighborsRequest(location=loc))
    rel = [(n.relation, n.symbol.qualified_name) for n in r.neighbors]
    assert rel[0] == ("enclosing", "Cart.total")
    assert (
        ("calls", "compute_price") in rel
        and ("called_by", "Cart.add") in rel
        and ("sibling", "Cart.add") not in rel
    )
    assert ("called_by", "checkout") in rel
    c = stub.Centrality(R.CentralityRequest(locations=[
        common_pb2.Location(repository="shop", path="shop/pricing.py", start_line=5, end_line=6),
        common_pb2.Location(repository="shop", path="shop/pricing.py", start_line=2, end_line=2),
        common_pb2.Location(repository="other", path="x.py", start_line=1, end_line=1),
    ]))  # fmt: skip
    assert c.values[0] > 0 and c.values[1] == 0.0 and c.values[2] == 0.0
    (st,) = stub.GetGraphStats(R.GetGraphStatsRequest()).repositories
    assert (st.repository, st.files, st.items, st.index_version) == ("shop", 4, 7, 7)
    assert st.disk_bytes > 0 and st.detail.endswith("0 files with parse errors")


def test_incremental_update_replaces_only_the_changed_file(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    index(stub, REPO)
    before = stub.FindDefinitions(R.FindDefinitionsRequest(name="Cart")).symbols[0]
    changed = {
        "shop/pricing.py": "def compute_price(items):\n    return 0\n\ndef discount(x):\n    return x\n"
    }
    resp = index(stub, changed, replace_all=False, version=2)
    assert resp.result.files_upserted == 1 and resp.result.index_version == 2
    gone = stub.FindDefinitions(R.FindDefinitionsRequest(name="apply_tax"))
    assert gone.resolution != R.RESOLUTION_EXACT and "apply_tax" not in {s.name for s in gone.symbols}
    d = stub.FindDefinitions(R.FindDefinitionsRequest(name="compute_price")).symbols
    assert [(s.location.start_line, s.location.end_line) for s in d] == [(1, 2)]
    after = stub.FindDefinitions(R.FindDefinitionsRequest(name="Cart")).symbols[0]
    assert after.location == before.location  # unchanged file untouched
    # calls from unchanged files re-resolve to the new definition
    refs = stub.FindReferences(R.FindReferencesRequest(name="compute_price"))
    assert {x.location.path for x in refs.references} == {"shop/models.py", "app.py"}
    assert all(x.resolution == R.RESOLUTION_EXACT for x in refs.references)
    # deletion removes the file's definitions and its import edges
    index(stub, {}, replace_all=False, deleted=["app.py"], version=3)
    assert not stub.FindReferences(R.FindReferencesRequest(name="checkout")).targets
    r = stub.Impact(R.ImpactRequest(target="shop.pricing"))
    assert [i.location.path for i in r.items] == ["shop/models.py"]


def test_syntax_errors_still_index_what_parses(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    repo = dict(REPO)
    repo["broken.py"] = "def fine():\n    return 1\n\ndef broken(:\n    pass\n"
    resp = index(stub, repo)
    assert resp.files_with_errors == 1
    assert stub.FindDefinitions(R.FindDefinitionsRequest(name="fine")).resolution == R.RESOLUTION_EXACT
    (st,) = stub.GetGraphStats(R.GetGraphStatsRequest(repositories=["shop"])).repositories
    assert st.detail.endswith("1 files with parse errors")


def test_errors_and_stream_without_commit(stub: graph_pb2_grpc.GraphServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as e:
        stub.FindDefinitions(R.FindDefinitionsRequest(repositories=["nope"], name="x"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    index(stub, REPO)
    no_such_kind = cast(R.SymbolKind, 99)  # out of the enum on purpose
    for bad in (R.FindDefinitionsRequest(name=""), R.FindDefinitionsRequest(name="x", limit=5000),
                R.FindDefinitionsRequest(name="x", kind=no_such_kind)):  # fmt: skip
        with pytest.raises(grpc.RpcError) as e:
            stub.FindDefinitions(bad)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as e:
        stub.Impact(R.ImpactRequest(target="x", max_depth=11))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    msgs = update_messages(
        R.UpdateGraphIndexRequest, "shop", files({"new.py": "def added():\n    pass\n"}), [], False, 9
    )
    with pytest.raises(grpc.RpcError) as e:
        stub.UpdateGraphIndex(iter(msgs[:-1]))  # no commit
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert stub.FindDefinitions(R.FindDefinitionsRequest(name="added")).resolution != R.RESOLUTION_EXACT
    (st,) = stub.GetGraphStats(R.GetGraphStatsRequest()).repositories
    assert st.index_version == 1 and st.files == 4
    assert stub.DeleteGraphRepository(R.DeleteGraphRepositoryRequest(repository="shop")).deleted
    with pytest.raises(grpc.RpcError) as e:
        stub.DeleteGraphRepository(R.DeleteGraphRepositoryRequest(repository="shop"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert not stub.GetGraphStats(R.GetGraphStatsRequest()).repositories


def test_a_repository_deleted_while_it_is_opened_is_skipped(
    stub: graph_pb2_grpc.GraphServiceStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    for repo in ("kept", "cut"):
        msgs = update_messages(R.UpdateGraphIndexRequest, repo, files(REPO), [], True, 1)
        stub.UpdateGraphIndex(iter(msgs))
    real_connect = service.connect_readonly
    opened: list[str] = []

    def connect_while_deleted(path: Path) -> sqlite3.Connection:
        generation = path.parent
        opened.append(generation.parent.name)
        if generation.parent.name == "cut":  # a DeleteRepository lands between CURRENT's read and the open
            SnapshotDir(generation.parent).delete()
        return real_connect(path)

    def stats(repositories: list[str]) -> set[str]:
        request = R.GetGraphStatsRequest(repositories=repositories)
        return {s.repository for s in stub.GetGraphStats(request, timeout=10).repositories}

    monkeypatch.setattr(service, "connect_readonly", connect_while_deleted)
    assert stats([]) == {"kept"}  # it was an INTERNAL error: sqlite could not open the removed file
    assert "cut" in opened
    with pytest.raises(grpc.RpcError) as e:
        stats(["cut"])
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
