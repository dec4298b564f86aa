"""The learnt re-scorer (eval/learnt_rank.py): features of the server's own ranking, first-in-file labels, and a
model that learns what the hand recipe ignores."""

from __future__ import annotations

from pathlib import Path

from codesearch.eval.learnt_rank import (
    FEATURES,
    LearntRanker,
    QueryHead,
    candidate_features,
    first_in_file_labels,
    head_of,
    report,
)
from codesearch.eval.offline import QueryLegs, Variant, rank_one
from codesearch.eval.polyglot import FIT_REPOS, PolyglotSet, PolyQuery, RepoSpec, Target
from codesearch.v1 import common_pb2

QUESTION = "how are widgets drawn on the canvas"


def hit(path: str, snippet: str, start: int = 1) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=start + 8)
    return common_pb2.Hit(location=loc, snippet=snippet, score=1.0)


def poly_set(queries: list[PolyQuery]) -> PolyglotSet:
    repos = {q.repo: RepoSpec(q.repo, "python", Path("."), None) for q in queries}
    return PolyglotSet(Path("."), repos, queries)


def widget_question(qid: str) -> QueryLegs:
    """BM25 puts a file without the question's words first; the answer's snippet holds them all but one. Both
    files have two chunks, so the hand recipe's file coherence keeps BM25's order."""
    keyword = [
        hit("decoy.py", "def unrelated(): pass"),
        hit("paint.py", "def draw(widgets, canvas): # widgets are drawn on the canvas"),
        hit("paint.py", "def helper(): pass", start=20),
        hit("decoy.py", "def other(): pass", start=20),
    ]
    return QueryLegs(qid, QUESTION, keyword, [], [], [])


def test_features_describe_each_head_candidate_and_its_file() -> None:
    ranked = rank_one(widget_question("q"), Variant("routed", routed=True, k=40.0))
    rows = candidate_features(ranked, QUESTION)
    assert len(rows) == 4 and all(len(r) == len(FEATURES) for r in rows)
    col = {name: i for i, name in enumerate(FEATURES)}
    paint = [r for r, f in zip(rows, ranked, strict=True) if f.hit.location.path == "paint.py"]
    assert [r[col["file_chunks"]] for r in paint] == [2.0, 2.0]
    assert sorted(r[col["file_first"]] for r in paint) == [0.0, 1.0]
    assert max(r[col["snippet_words"]] for r in paint) > 0.5
    decoy = [r for r, f in zip(rows, ranked, strict=True) if f.hit.location.path == "decoy.py"]
    assert [r[col["snippet_words"]] for r in decoy] == [0.0, 0.0]


def test_only_the_first_matching_chunk_of_a_file_is_labelled() -> None:
    q = PolyQuery("cobra", "q", QUESTION, "semantic", (Target("paint.py"),))
    head = QueryHead(
        "q",
        [[0.0] * len(FEATURES)] * 3,
        [{"path": p, "start_line": 1, "end_line": 9} for p in ("decoy.py", "paint.py", "paint.py")],
        True,
    )
    assert first_in_file_labels(head, poly_set([q])) == [0.0, 1.0, 0.0]


def test_the_model_learns_what_the_hand_recipe_ignores() -> None:
    train = [widget_question(f"t{i}") for i in range(12)]
    queries = [
        PolyQuery(FIT_REPOS[i % len(FIT_REPOS)], f"t{i}", QUESTION, "semantic", (Target("paint.py"),))
        for i in range(12)
    ]
    pset = poly_set(queries)
    heads = [head_of(q) for q in train]
    assert heads[0].results[0]["path"] == "decoy.py"  # the hand recipe: BM25's first
    model = LearntRanker(c=1.0).fit(heads, pset)
    assert model.order(head_of(widget_question("new")))[0]["path"] == "paint.py"


def test_the_report_compares_the_hand_recipe_with_cross_validated_models() -> None:
    held = [PolyQuery("click", f"h{i}", QUESTION, "semantic", (Target("paint.py"),)) for i in range(2)]
    fit = [
        PolyQuery(r, f"{r}{i}", QUESTION, "semantic", (Target("paint.py"),))
        for r in FIT_REPOS
        for i in range(2)
    ]
    pset = poly_set(fit + held)
    text = report([head_of(widget_question(q.qid)) for q in pset.queries], pset)
    hand, *learnt = [line for line in text.splitlines() if line.startswith(("hand recipe", "learnt"))]
    assert hand.split(" | ")[1] == "0.631"  # the answer second: 1/log2(3)
    assert all(line.split(" | ")[1] == "1.000" for line in learnt)  # each fold learnt it from the others
    assert "click                0.631 -> 1.000" in text
