"""RerankService against a real (tiny, freshly trained) cross-encoder over real gRPC."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import numpy as np
import pytest
from codesearch.common.aio_thread import ThreadedServer
from codesearch.common.grpc_util import add_health_and_reflection
from codesearch.common.models.lookup import model_path
from codesearch.common.models.threads import configure_torch_threads
from codesearch.config import Settings
from codesearch.rerank import service as rservice
from codesearch.rerank import text as rtext
from codesearch.rerank.model import BLEND_FILE, Blend, Candidate, Reranker
from codesearch.v1 import rerank_pb2, rerank_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.fixture_types import StartServer

if TYPE_CHECKING:  # imported where it is used: it loads torch
    from sentence_transformers import CrossEncoder

pytestmark = pytest.mark.model

TOY_LENGTH = 64
TOY_STEPS = 10  # enough for the fresh head to separate code from prose; ~5-30 s on 2 busy cores

# Queries about code; the right answer is a code snippet, the wrong ones are cooking prose.
TOY_TRAIN = [
    ("function that adds two numbers", "def add(a, b):\n    return a + b"),
    ("read a file into a string", "def read(path):\n    with open(path) as f:\n        return f.read()"),
    ("reverse a list", "def reverse(xs):\n    return xs[::-1]"),
    ("count words in text", "def count_words(text):\n    return len(text.split())"),
    ("check if a number is even", "def is_even(n):\n    return n % 2 == 0"),
    ("join paths", "def join(a, b):\n    return a.rstrip('/') + '/' + b"),
]
PROSE = [
    "Whisk the eggs with sugar until pale, then fold in the flour.",
    "Simmer the tomatoes for twenty minutes and season with basil.",
    "Preheat the oven and butter a round cake tin.",
    "Knead the dough until smooth and let it rise in a warm place.",
    "Slice the onions thinly and fry them slowly in olive oil.",
    "Serve the soup hot with fresh bread and a little cream.",
]
HELD_OUT_QUERY = "sort numbers in ascending order"
HELD_OUT_RIGHT = "def sort_numbers(values):\n    return sorted(values)"
HELD_OUT_WRONG = "Roast the peppers until the skins blacken, then peel them."


def _train_toy(ce: CrossEncoder, batches: Callable[[int], list[tuple[str, list[str]]]], steps: int) -> None:
    """Listwise training of a plain CrossEncoder's fresh head and top layers (embeddings and the lower half
    frozen): cross-entropy with each group's positive first."""
    import torch

    model = ce.model
    assert model is not None
    tokenizer = ce.tokenizer
    frozen = ("embeddings.", "encoder.layer.0.", "encoder.layer.1.", "encoder.layer.2.")
    named = [(n, p) for n, p in model.named_parameters() if not n.split(".", 1)[-1].startswith(frozen)]
    trainable = {id(p) for _, p in named}
    for p in model.parameters():
        p.requires_grad = id(p) in trainable
    groups = [
        {"params": [p for n, p in named if not n.startswith("classifier")], "lr": 1e-4},
        {"params": [p for n, p in named if n.startswith("classifier")], "lr": 2e-3},
    ]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    model.train()
    for step in range(steps):
        items = batches(step)
        enc = tokenizer(
            [q for q, texts in items for _ in texts],
            [t for _, texts in items for t in texts],
            padding=True,
            truncation=True,
            max_length=TOY_LENGTH,
            return_tensors="pt",
        ).to(model.device)
        logits = model(**enc).logits.view(len(items), len(items[0][1]))
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(items), dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in named], 1.0)
        opt.step()
        sched.step()
    model.eval()


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cross-encoder trained from the bundled MiniLM weights on the toy set, saved to disk."""
    from sentence_transformers import CrossEncoder

    configure_torch_threads(0)
    ce = CrossEncoder(
        model_path("all-MiniLM-L6-v2"),
        num_labels=1,
        max_length=TOY_LENGTH,
        device="cpu",
        local_files_only=True,
    )

    def batches(step: int) -> list[tuple[str, list[str]]]:
        items = []
        for k in range(2):
            q, right = TOY_TRAIN[(step * 2 + k) % len(TOY_TRAIN)]
            wrong = [PROSE[(step + k + j) % len(PROSE)] for j in range(2)]
            items.append((q, [right, *wrong]))
        return items

    _train_toy(ce, batches, TOY_STEPS)
    out = tmp_path_factory.mktemp("toy") / "model"
    ce.save(str(out))
    return out


def _settings(settings: Settings, model: str) -> Settings:
    # Exports of the toy models go under the test's data directory, not the machine-wide model cache.
    return dataclasses.replace(settings, rerank_model=model, model_cache=settings.home / "model-cache")


def _start(start_server: StartServer, settings: Settings) -> ThreadedServer:
    async def registrar(server: grpc.aio.Server) -> None:
        names = rservice.register(server, settings)
        health = add_health_and_reflection(server, names)
        await rservice.wire_health(server, health)

    return start_server([registrar])


def _wait_loaded(
    stub: rerank_pb2_grpc.RerankServiceStub, timeout: float = 120
) -> rerank_pb2.GetRerankerInfoResponse:
    deadline = time.monotonic() + timeout
    while True:
        info = stub.GetRerankerInfo(rerank_pb2.GetRerankerInfoRequest())
        if info.available or info.unavailable_reason != "model is loading" or time.monotonic() > deadline:
            return info
        time.sleep(0.2)


def _health(channel: grpc.Channel) -> int:
    req = health_pb2.HealthCheckRequest(service=rservice.SERVICE_NAME)
    return health_pb2_grpc.HealthStub(channel).Check(req).status


def _cand(
    i: str, text: str, path: str = "", breadcrumb: Sequence[str] = (), focus_lines: Sequence[int] = ()
) -> rerank_pb2.RerankCandidate:
    return rerank_pb2.RerankCandidate(
        id=i, text=text, path=path, breadcrumb=breadcrumb, focus_lines=focus_lines
    )


def test_trained_model_orders_held_out_pair(
    toy_model: Path, settings: Settings, start_server: StartServer
) -> None:
    server = _start(start_server, _settings(settings, str(toy_model)))
    with grpc.insecure_channel(server.address) as channel:
        stub = rerank_pb2_grpc.RerankServiceStub(channel)
        info = _wait_loaded(stub)
        assert info.available, info.unavailable_reason
        assert info.model == str(toy_model)
        assert info.max_length == TOY_LENGTH
        assert _health(channel) == health_pb2.HealthCheckResponse.SERVING

        req = rerank_pb2.RerankRequest(
            query=HELD_OUT_QUERY,
            candidates=[
                _cand("wrong", HELD_OUT_WRONG, path="recipes/peppers.txt"),
                _cand(
                    "right", HELD_OUT_RIGHT, path="lib/sorting.py", breadcrumb=["numbers"], focus_lines=[2]
                ),
            ],
        )
        resp = stub.Rerank(req)
        assert [s.id for s in resp.scores] == ["right", "wrong"]
        assert [s.index for s in resp.scores] == [1, 0]
        assert all(0.0 <= s.score <= 1.0 for s in resp.scores)
        assert resp.scores[0].score > resp.scores[1].score
        assert resp.model == str(toy_model)

        # A candidate's score does not depend on what it is batched with (no per-batch normalisation).
        alone = stub.Rerank(rerank_pb2.RerankRequest(query=HELD_OUT_QUERY, candidates=[req.candidates[1]]))
        assert alone.scores[0].score == pytest.approx(resp.scores[0].score, abs=1e-4)

        top = stub.Rerank(rerank_pb2.RerankRequest(query=HELD_OUT_QUERY, candidates=req.candidates, top_n=1))
        assert [s.id for s in top.scores] == ["right"]


def test_bad_input_is_invalid_argument(
    toy_model: Path, settings: Settings, start_server: StartServer
) -> None:
    server = _start(start_server, _settings(settings, str(toy_model)))
    good = [_cand("a", "def f():\n    pass")]
    bad = [
        rerank_pb2.RerankRequest(query="", candidates=good),
        rerank_pb2.RerankRequest(query="   ", candidates=good),
        rerank_pb2.RerankRequest(query="q"),
        rerank_pb2.RerankRequest(query="q", candidates=good * (rservice.MAX_CANDIDATES + 1)),
        rerank_pb2.RerankRequest(query="q", candidates=good, top_n=-1),
        rerank_pb2.RerankRequest(query="x" * 5000, candidates=good),
    ]
    with grpc.insecure_channel(server.address) as channel:
        stub = rerank_pb2_grpc.RerankServiceStub(channel)
        for req in bad:
            with pytest.raises(grpc.RpcError) as e:
                stub.Rerank(req)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
        # The bound itself is fine.
        resp = stub.Rerank(
            rerank_pb2.RerankRequest(query="q", candidates=good * rservice.MAX_CANDIDATES, top_n=3)
        )
        assert len(resp.scores) == 3


@pytest.mark.parametrize("model", ["/nonexistent/reranker", ""])
def test_unavailable_model_keeps_service_up(
    model: str, settings: Settings, start_server: StartServer
) -> None:
    server = _start(start_server, _settings(settings, model))
    with grpc.insecure_channel(server.address) as channel:
        stub = rerank_pb2_grpc.RerankServiceStub(channel)
        info = _wait_loaded(stub)
        assert not info.available
        assert info.unavailable_reason
        if not model:
            assert "CODESEARCH_RERANK_MODEL" in info.unavailable_reason
        else:
            assert model in info.unavailable_reason
        with pytest.raises(grpc.RpcError) as e:
            stub.Rerank(rerank_pb2.RerankRequest(query="q", candidates=[_cand("a", "x")]))
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        details = e.value.details()
        assert details is not None
        assert info.unavailable_reason in details
        assert _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING


def test_trained_model_in_data_dir_is_the_default(toy_model: Path, settings: Settings) -> None:
    shutil.copytree(toy_model, settings.service_dir("rerank") / "model")
    servicer = rservice.RerankServicer(settings, load_now=False)
    assert servicer.model_name == str(settings.service_dir("rerank") / "model")
    assert servicer.loading


def test_scores_are_sigmoid_of_logits_and_blend_applies(toy_model: Path, tmp_path: Path) -> None:
    cands = [Candidate(HELD_OUT_RIGHT, "a.py"), Candidate(HELD_OUT_WRONG, "b.txt")]
    plain = Reranker(str(toy_model), cache_dirs=[tmp_path / "cache"])
    texts = plain.texts(HELD_OUT_QUERY, cands)
    logits = plain.logits(HELD_OUT_QUERY, texts)
    probs = plain.score(HELD_OUT_QUERY, cands)
    np.testing.assert_allclose(probs, 1 / (1 + np.exp(-logits)), atol=1e-6)

    blended_dir = tmp_path / "blended"
    shutil.copytree(toy_model, blended_dir)
    Blend(weights={"ce": 0.5, "lex": 2.0}, bias=-1.0, extra={"max_length": TOY_LENGTH}).save(
        blended_dir / BLEND_FILE
    )
    blended = Reranker(str(blended_dir), cache_dirs=[tmp_path / "cache"])
    lex = np.array([rtext.lexical_overlap(HELD_OUT_QUERY, t) for t in texts])
    expected = 1 / (1 + np.exp(-(-1.0 + 0.5 * logits + 2.0 * lex)))
    np.testing.assert_allclose(blended.score(HELD_OUT_QUERY, cands), expected, atol=1e-5)


def test_orchestrator_reranks_only_when_asked(
    toy_model: Path, settings: Settings, start_server: StartServer, tmp_path: Path
) -> None:
    """The search pipeline's rerank stage through real servers: on request it reranks and says so; by default
    (no measured gain) it is skipped with its reason."""
    from codesearch.server import registrars
    from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

    repo = tmp_path / "repo"
    repo.mkdir()
    for i, (_query, code) in enumerate(TOY_TRAIN):
        (repo / f"m{i}.py").write_text(code + "\n")
    server = start_server(
        registrars(_settings(settings, str(toy_model)), ("keyword", "graph", "rerank", "orchestrator"))
    )
    channel = grpc.insecure_channel(server.address)
    _wait_loaded(rerank_pb2_grpc.RerankServiceStub(channel))
    stub = search_pb2_grpc.SearchServiceStub(channel)
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="toy")))

    def rerank_report(resp: search_pb2.SearchResponse) -> common_pb2.LegReport:
        return next(r for r in resp.legs if r.leg == common_pb2.LEG_RERANK)

    query = "how do I read a file into a string"
    on = stub.Search(search_pb2.SearchRequest(query=query, rerank=search_pb2.RERANK_POLICY_ON, no_cache=True))
    assert rerank_report(on).status == common_pb2.LEG_STATUS_OK and rerank_report(on).hits >= 2
    reranked = [h for h in on.hits if common_pb2.LEG_RERANK in h.found_by]
    assert len(reranked) >= 2
    for h in reranked:
        p = next(s.score for s in h.leg_scores if s.leg == common_pb2.LEG_RERANK)
        assert 0.0 <= p <= 1.0
    assert [h.score for h in on.hits] == sorted((h.score for h in on.hits), reverse=True)

    default = stub.Search(search_pb2.SearchRequest(query=query, no_cache=True))
    assert rerank_report(default).status == common_pb2.LEG_STATUS_SKIPPED
    assert "off in the default preset" in rerank_report(default).reason
    assert not any(common_pb2.LEG_RERANK in h.found_by for h in default.hits)


def test_onnx_backends_score_like_torch(toy_model: Path, tmp_path: Path) -> None:
    """The default onnx backend is the same model: torch's logits on real pairs of uneven length (padding),
    no torch needed to score; int8 stays close and keeps the order of a clear pair."""
    cands = [
        Candidate(HELD_OUT_RIGHT, "a.py", ["Sorter"]),
        Candidate(HELD_OUT_WRONG, "b.txt"),
        Candidate("\n".join(f"def f{i}(x):\n    return x * {i}" for i in range(30)), "c.py", (), [7]),
    ]
    torch_rr = Reranker(str(toy_model), backend="torch")
    onnx_rr = Reranker(str(toy_model), backend="onnx", cache_dirs=[tmp_path / "cache"])
    int8_rr = Reranker(str(toy_model), backend="onnx-int8", cache_dirs=[tmp_path / "cache"])
    assert (torch_rr.backend, onnx_rr.backend, int8_rr.backend) == ("torch", "onnx", "onnx-int8")
    texts = torch_rr.texts(HELD_OUT_QUERY, cands)
    assert onnx_rr.texts(HELD_OUT_QUERY, cands) == texts  # same tokenizer counts, same trimming
    ref = torch_rr.logits(HELD_OUT_QUERY, texts)
    np.testing.assert_allclose(onnx_rr.logits(HELD_OUT_QUERY, texts), ref, atol=1e-4)
    np.testing.assert_allclose(
        onnx_rr.score(HELD_OUT_QUERY, cands), torch_rr.score(HELD_OUT_QUERY, cands), atol=1e-5
    )
    int8 = int8_rr.logits(HELD_OUT_QUERY, texts)
    assert int8[0] > int8[1]
    assert np.abs(int8 - ref).max() < 1.0
    assert {p.name for p in (tmp_path / "cache" / "onnx").iterdir()}  # exported into the cache given


def test_unknown_backend_is_an_error_and_unsupported_models_fall_back(
    toy_model: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="unknown rerank backend"):
        Reranker(str(toy_model), backend="tensorrt")
    # An activation the onnx backends do not reproduce: served by torch rather than mis-scored.
    odd = tmp_path / "odd"
    shutil.copytree(toy_model, odd)
    cfg = odd / "config_sentence_transformers.json"
    cfg.write_text(
        cfg.read_text().replace("torch.nn.modules.activation.Sigmoid", "torch.nn.modules.activation.Tanh")
    )
    rr = Reranker(str(odd), cache_dirs=[tmp_path / "cache"])
    assert rr.backend == "torch"
    probs = rr.score(HELD_OUT_QUERY, [Candidate(HELD_OUT_RIGHT, "a.py")])
    logit = rr.logits(HELD_OUT_QUERY, rr.texts(HELD_OUT_QUERY, [Candidate(HELD_OUT_RIGHT, "a.py")]))
    np.testing.assert_allclose(probs, np.clip(np.tanh(logit), 0.0, 1.0), atol=1e-6)
