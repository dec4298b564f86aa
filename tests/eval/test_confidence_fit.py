"""The confidence refit: a standardised logistic model, unfolded to the raw units the server computes."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from codesearch.eval.confidence_fit import (
    CANDIDATES,
    Answer,
    Population,
    first_file,
    fit,
    grouped_cv,
    logit,
    one_model,
    population_auroc,
    sentence_model,
    write_model,
)
from codesearch.eval.offline import QueryLegs, Variant, rank_one
from codesearch.orchestrator.ranking import confidence
from codesearch.orchestrator.ranking.confidence import CONF_BIAS, CONF_WEIGHTS, FEATURES
from codesearch.orchestrator.ranking.fusion import fuse
from codesearch.v1 import common_pb2

pytest.importorskip("sklearn")


def answers(seed: int, repos: int = 4, per_repo: int = 40) -> list[Answer]:
    """Feature 0 decides rightness (on a large scale), feature 1 is noise: the model must weigh them so."""
    rng = random.Random(seed)
    out = []
    for r in range(repos):
        for _ in range(per_repo):
            signal, noise = rng.uniform(0, 100), rng.uniform(0, 1)
            right = rng.random() < 1 / (1 + math.exp(-(signal - 50) / 10))
            out.append(Answer([signal, noise], right, f"repo{r}", "fit"))
    return out


def test_fit_unfolds_to_raw_units_and_cv_holds_out_whole_repositories() -> None:
    train = answers(0)
    bias, weights = fit(train, [0, 1])
    # In raw units the decisive feature's boundary sits where the data put it (50), not at the scaler's origin.
    assert -bias / weights[0] == pytest.approx(50, abs=8)
    assert abs(weights[1] * 1.0) < abs(weights[0] * 100) / 10  # the noise feature's whole range weighs little
    assert logit(bias, weights, [90.0, 0.5], [0, 1]) > 0 > logit(bias, weights, [10.0, 0.5], [0, 1])
    cv = grouped_cv(train, [], one_model([0, 1]))
    noise_only = grouped_cv(train, [], one_model([1]))
    assert cv is not None and noise_only is not None
    assert cv > 0.8 and noise_only < 0.7


def _hit(path: str, start: int, snippet: str = "", score: float = 1.0) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=start + 9)
    return common_pb2.Hit(location=loc, score=score, snippet=snippet)


KEYWORD = [_hit("router.go", 1), _hit("tree.go", 1), _hit("mux.go", 1)]


def test_legs_agree_reads_each_legs_own_first_file() -> None:
    same = fuse(
        [(common_pb2.LEG_KEYWORD, 1.0, KEYWORD), (common_pb2.LEG_VECTOR, 0.5, [_hit("router.go", 40)])], 40
    )
    # The vector leg's first hit is in another file than the keyword leg's, though it also found router.go.
    other = fuse(
        [
            (common_pb2.LEG_KEYWORD, 1.0, KEYWORD),
            (common_pb2.LEG_VECTOR, 0.5, [_hit("tree.go", 1), _hit("router.go", 40)]),
        ],
        40,
    )
    alone = fuse([(common_pb2.LEG_KEYWORD, 1.0, KEYWORD)], 40)  # the direct path: nothing to disagree with
    assert first_file(other, common_pb2.LEG_VECTOR) == ("r", "tree.go")
    assert first_file(alone, common_pb2.LEG_VECTOR) is None
    q = QueryLegs("q", "how are routes matched", KEYWORD, [], [], [])  # the legs themselves are not read here
    agree, first_agree = CANDIDATES["legs_agree"], CANDIDATES["legs_first_agree"]
    assert agree(same, q) == first_agree(same, q) == 1.0
    assert agree(other, q) == first_agree(other, q) == 0.0
    assert agree(alone, q) == 1.0 and first_agree(alone, q) == 0.0


ROUTED = Variant("routed", routed=True, k=40.0)


def test_robustness_reads_whether_the_top_file_survives_a_changed_answer() -> None:
    """Over the server's own routing, fusion and signals (offline.rank_one): a.go is first either way, but only
    when the keyword leg also put it first does it stay first without the vector leg."""
    query = "how are routes matched against the request path"
    vector = [_hit("a.go", 1, "y"), _hit("c.go", 1, "w")]
    agreeing = QueryLegs("q", query, [_hit("a.go", 1, "y", 2.0), _hit("b.go", 1, "x")], vector, [], [])
    carried = QueryLegs("q", query, [_hit("b.go", 1, "x", 2.0), _hit("a.go", 1, "y")], vector, [], [])
    for legs, kept in ((agreeing, 1.0), (carried, 0.0)):
        fused = rank_one(legs, ROUTED)
        assert fused[0].hit.location.path == "a.go"
        assert CANDIDATES["first_without_vector"](fused, legs) == kept
        # A flatter RRF keeps the file both legs found first.
        assert CANDIDATES["first_at_k80"](fused, legs) == 1.0
        assert CANDIDATES["first_without_each_word"](fused, legs) == 1.0  # no word is in a path or a name
    single = QueryLegs("q", "Router", KEYWORD, [], [], [])
    assert CANDIDATES["first_without_each_word"](rank_one(single, ROUTED), single) == 1.0  # nothing to drop
    routes = [_hit("routes.go", 1, "x"), _hit("a.go", 1, "y", 2.0)]
    worded = QueryLegs("q", "routes matched", [*routes], [], [], [])
    fused = rank_one(worded, ROUTED)
    # "routes" names routes.go (a path word): dropped, the other file comes back first.
    assert fused[0].hit.location.path == "routes.go"
    assert CANDIDATES["first_without_each_word"](fused, worded) == 0.5


def _answer(x: list[float], right: bool, sentence: bool, group: str = "g") -> Answer:
    return Answer(x, right, group, "fit", sentence=sentence)


def test_sentence_model_keeps_names_on_the_shipped_model_and_caps_sentences() -> None:
    rng = random.Random(1)
    n = len(FEATURES)
    train = []
    for i in range(120):
        margin = rng.random()
        x = [margin] + [rng.random() for _ in range(n - 1)]
        train.append(_answer(x, rng.random() < margin, sentence=True, group=f"r{i % 4}"))
    name = _answer([1.0, 1.0, 1.0, 0.0, 0.0, 1 / 12, 0.0][:n], True, sentence=False)
    model = sentence_model(list(range(n)), cap=0.9)(train)
    shipped = 1 / (1 + math.exp(-logit(CONF_BIAS, CONF_WEIGHTS, name.x, list(range(n)))))
    assert model(name) == pytest.approx(shipped)
    assert max(model(a) for a in train) <= 0.9
    assert model(_answer([1.0] + [0.5] * (n - 1), True, True)) > model(
        _answer([0.0] + [0.5] * (n - 1), True, True)
    )


def test_population_mixes_the_refit_with_the_runs_other_answers() -> None:
    """A set's AUROC as the server answers it: a refit that rates its wrong answer above the exact-leg model's
    right ones is caught here, not in the signal-ranked answers alone."""
    wrong = _answer([0.0], False, True)
    right = _answer([1.0], True, True)
    others = [(0.9, True, "tune"), (0.95, True, "tune")]
    modest = Population("dev", [wrong, right], others, True)
    assert population_auroc(modest, lambda a: 0.5 + 0.49 * a.x[0]) == 1.0
    assert population_auroc(modest, lambda a: 0.97 + 0.02 * a.x[0]) == pytest.approx(1 / 3)


def test_write_model_replaces_the_shipped_numbers(tmp_path: Path) -> None:
    target = tmp_path / "confidence.py"
    target.write_text(Path(confidence.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    weights = [0.5 + i for i in range(len(FEATURES))]
    write_model(str(target), -1.25, weights, 0.91)
    namespace: dict[str, object] = {}
    exec(compile(target.read_text(encoding="utf-8"), str(target), "exec"), namespace)
    assert namespace["SENTENCE_BIAS"] == -1.25
    assert namespace["SENTENCE_WEIGHTS"] == tuple(weights)
    assert namespace["SENTENCE_CAP"] == 0.91
    # The names' model is left as it is.
    assert namespace["CONF_BIAS"] == CONF_BIAS and namespace["CONF_WEIGHTS"] == CONF_WEIGHTS
    assert namespace["FEATURES"] == FEATURES
    other = tmp_path / "other.py"
    other.write_text("BIAS = 1.0\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not found"):
        # A file without the model's lines is refused, not half-written.
        write_model(str(other), 0.0, weights, 0.9)
    assert other.read_text(encoding="utf-8") == "BIAS = 1.0\n"
