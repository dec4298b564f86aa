"""Per-query fusion weights: when the keyword leg's top hit holds every word of the question, meaning steps aside.

A question quoted from the code's own words (a docstring sentence, a comment, a log line) is answered by BM25: its
top hit contains all of the query's words. A paraphrase shares few words with any chunk. The share of the query's
words found in the keyword leg's first hit tells them apart (dev set, both query sets, keyword hit@1 by that share:
0.95 from 0.95 up, n=167; 0.16 below 0.5, n=141). For meaning queries whose keyword answer is word-for-word the
vector leg then has no say, and the orchestrator stops waiting for it (fanout.py): the answer comes at keyword speed.
"""

from __future__ import annotations

from codesearch.common.text import coverage, words
from codesearch.orchestrator.ranking.fusion import RankedList
from codesearch.v1 import common_pb2, search_pb2

ADAPTIVE_INTENTS = (search_pb2.INTENT_UNDERSTAND_CODE, search_pb2.INTENT_FIND_SIMILAR)
# Share of the query's words in the keyword top hit from which that hit is usually right; 0.6, 0.75 and 0.9 gave
# the same MRR@10 on the tune half (few queries fall between).
DECISIVE_COVERAGE = 0.9
# The vector leg's weight then. Tune half, concept MRR@10: 0.886 at 0, 0.863 at .25, 0.832 at 1 (no change on the
# paraphrase set, whose keyword hits are rarely word-for-word). Doubling the vector weight when coverage is below
# 0.5 raised paraphrases on the tune half (.218 -> .234) but lowered them on the check half (.262 -> .248): not kept.
DECISIVE_VECTOR_FACTOR = 0.0


def keyword_coverage(query: str, hits: list[common_pb2.Hit]) -> float:
    """Share of the query's words in the keyword leg's first hit (0.0 without hits). Its snippet is the window
    of the chunk with the most query words (keyword/snippet.py)."""
    return coverage(words(query), hits[0].snippet) if hits else 0.0


def decisive(intent: int, query: str, keyword_hits: list[common_pb2.Hit]) -> str:
    """Why the keyword answer settles this query ("" when it does not)."""
    if intent not in ADAPTIVE_INTENTS:
        return ""
    coverage = keyword_coverage(query, keyword_hits)
    if coverage < DECISIVE_COVERAGE:
        return ""
    return f"keyword top hit has {coverage:.0%} of the query's words"


def adapt_weights(intent: int, query: str, lists: list[RankedList]) -> tuple[list[RankedList], float, str]:
    """The lists with the vector leg's weight adjusted, the factor applied, and why ("" when unchanged)."""
    legs = {leg: hits for leg, _w, hits in lists}
    if common_pb2.LEG_KEYWORD not in legs or common_pb2.LEG_VECTOR not in legs:
        return lists, 1.0, ""
    why = decisive(intent, query, legs[common_pb2.LEG_KEYWORD])
    if not why:
        return lists, 1.0, ""
    factor = DECISIVE_VECTOR_FACTOR
    out = [(leg, w * factor if leg == common_pb2.LEG_VECTOR else w, hits) for leg, w, hits in lists]
    return out, factor, f"weight x{factor:g}: {why}"
