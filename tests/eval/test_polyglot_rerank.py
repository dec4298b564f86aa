"""`codesearch eval --polyglot --rerank off,on` through real servers with a real (small, untrained) cross-encoder:
one run per policy, the rerank stage's own time recorded per reranked query, and the latency table."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import grpc
import pytest
from codesearch.cli.eval_cmd import main as eval_main
from codesearch.config import Settings
from codesearch.eval.polyglot import load_set
from codesearch.eval.polyglot_latency import latency
from codesearch.v1 import rerank_pb2, rerank_pb2_grpc

from tests.fixture_types import StartServer

server_mod = pytest.importorskip("codesearch.server")
pytest.importorskip("codesearch._native")

SMALL_REPO = "bats-core"  # 8 files, 20 queries
TOY_LENGTH = 32  # tokens per pair: the plumbing is under test, not the model


@pytest.fixture
def polyglot(shared_eval: Path) -> Path:
    """The polyglot set beside the repository; its tests skip when it is absent."""
    return (
        shared_eval / "polyglot"
        if (shared_eval / "polyglot" / "score.py").is_file()
        else _absent(shared_eval)
    )


def _absent(shared_eval: Path) -> Path:
    pytest.skip(f"{shared_eval / 'polyglot'} is not present")


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from codesearch.common.models.lookup import model_path
    from codesearch.common.models.threads import configure_torch_threads
    from sentence_transformers import CrossEncoder

    configure_torch_threads(0)
    out = tmp_path_factory.mktemp("ce") / "model"
    fresh = CrossEncoder(
        model_path("all-MiniLM-L6-v2"),
        num_labels=1,
        max_length=TOY_LENGTH,
        device="cpu",
        local_files_only=True,
    )
    fresh.save(str(out))
    return out


def test_rerank_policies_are_runs_with_the_stage_time(
    polyglot: Path,
    small_model: Path,
    settings: Settings,
    start_server: StartServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = dataclasses.replace(
        settings, rerank_model=str(small_model), model_cache=settings.home / "model-cache"
    )
    server = start_server(server_mod.registrars(settings, ("keyword", "graph", "rerank", "orchestrator")))
    info = rerank_pb2_grpc.RerankServiceStub(grpc.insecure_channel(server.address))
    for _ in range(600):
        if info.GetRerankerInfo(rerank_pb2.GetRerankerInfoRequest()).available:
            break
        time.sleep(0.2)
    out = tmp_path / "out"
    args = ["--polyglot", str(polyglot), "--only-repo", SMALL_REPO, "--address", server.address]
    assert eval_main([*args, "--modes", "auto", "--rerank", "off,on", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    off = [json.loads(x) for x in (out / "run-auto-rerank.jsonl").read_text().splitlines()]
    on = [json.loads(x) for x in (out / "run-auto+rerank.jsonl").read_text().splitlines()]
    assert len(off) == len(on) == 20
    assert not any("rerank_ms" in line for line in off)
    reranked = [line for line in on if len(line["results"]) >= 2]
    assert reranked and all(line["rerank_ms"] > 0 for line in reranked)
    assert all(line["rerank_ms"] < line["latency_ms"] for line in reranked)
    assert "Latency per query, ms" in printed and "auto+rerank search p50/p99" in printed
    summary = json.loads((out / "summary.json").read_text())
    lat = summary["runs"]["auto+rerank"]["latency"]
    assert lat["ALL"]["search"]["n"] == 20 and lat["ALL"]["rerank"]["n"] == len(reranked)
    assert summary["runs"]["auto-rerank"]["latency"]["ALL"]["rerank"] is None


def test_latency_scopes_and_percentiles(polyglot: Path) -> None:
    pset = load_set(polyglot).for_repos([SMALL_REPO, "click"])
    run = {
        q.qid: {"latency_ms": float(i + 1), **({"rerank_ms": 0.5} if q.repo == "click" else {})}
        for i, q in enumerate(pset.queries)
    }
    lat = latency(pset, run)
    n_click = sum(q.repo == "click" for q in pset.queries)
    assert lat["ALL"]["search"] == {
        "p50": pytest.approx((len(run) + 1) / 2, abs=0.05),
        "p99": pytest.approx(len(run) - 0.01 * (len(run) - 1), abs=0.05),
        "n": len(run),
    }
    assert lat["held-out"]["rerank"] == {"p50": 0.5, "p99": 0.5, "n": n_click}  # click is held out
    assert lat["fit"]["rerank"] is None  # bats-core is a fit repository and was not reranked
    assert set(lat) >= {"ALL", "semantic", "fit", "held-out", "fit/semantic"}
