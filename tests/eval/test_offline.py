"""The offline re-scorer replays the server's routing (eval/offline.py), including the adaptive vector cancel."""

from __future__ import annotations

from codesearch.eval.offline import QueryLegs, Variant, rank_one
from codesearch.v1 import common_pb2


def hit(path: str, snippet: str) -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=1, end_line=9)
    return common_pb2.Hit(location=loc, snippet=snippet, score=1.0)


def legs(query: str, keyword_snippet: str) -> QueryLegs:
    keyword = [hit("quoted.py", keyword_snippet), hit("other.py", "nothing here")]
    vector = [hit(f"near{i}.py", "x") for i in range(5)]
    return QueryLegs("q", query, keyword, vector, [], [])


def test_a_keyword_answer_quoting_the_question_cancels_the_vector_leg() -> None:
    routed = Variant("routed", routed=True, k=40.0)
    query = "close every idle pooled connection"
    quoted = rank_one(legs(query, "def close_idle(self):\n    # close every idle pooled connection"), routed)
    assert {f.hit.location.path for f in quoted} == {
        "quoted.py",
        "other.py",
    }  # the server gives vectors weight 0
    paraphrased = rank_one(legs(query, "def shutdown(self): ..."), routed)
    assert any(f.hit.location.path.startswith("near") for f in paraphrased)  # here the vector leg has its say
