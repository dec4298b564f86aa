"""Per-query fusion weights: when the keyword leg's top hit holds every word of the question, meaning steps aside.

A question quoted from the code's own words (a docstring sentence, a comment, a log line) is answered by BM25: its
top hit contains all of the query's words. A paraphrase shares few words with any chunk. The share of the query's
words found in the keyword leg's first hit tells them apart (dev set, both query sets, keyword hit@1 by that share:
0.95 from 0.95 up, n=167; 0.16 below 0.5, n=141). For meaning queries whose keyword answer is word-for-word the
vector leg then has no say: the plan marks such queries (plan.Plan.settles) and the fan-out drops the vector leg's
answer once the keyword leg's settles it (fanout.py), so the answer comes at keyword speed.
"""

from __future__ import annotations

from codesearch.common.text import coverage
from codesearch.orchestrator.query import QueryLike, as_query
from codesearch.v1 import common_pb2, search_pb2

ADAPTIVE_INTENTS = (search_pb2.INTENT_UNDERSTAND_CODE, search_pb2.INTENT_FIND_SIMILAR)
# Share of the query's words in the keyword top hit from which that hit is usually right; 0.6, 0.75 and 0.9 gave
# the same MRR@10 on the tune half (few queries fall between). The vector leg is then dropped: its weight at that
# point, tune half, concept MRR@10: 0.886 at 0, 0.863 at .25, 0.832 at 1 (no change on the paraphrase set, whose
# keyword hits are rarely word-for-word). Doubling the vector weight when coverage is below 0.5 raised paraphrases
# on the tune half (.218 -> .234) but lowered them on the check half (.262 -> .248): not kept.
DECISIVE_COVERAGE = 0.9


def keyword_coverage(query: QueryLike, hits: list[common_pb2.Hit]) -> float:
    """Share of the query's words in the keyword leg's first hit (0.0 without hits). Its snippet is the window
    of the chunk with the most query words (keyword/snippet.py)."""
    return coverage(set(as_query(query).tokens), hits[0].snippet) if hits else 0.0


def decisive(intent: int, keyword_coverage: float) -> str:
    """Why the keyword answer settles this query ("" when it does not)."""
    if intent not in ADAPTIVE_INTENTS or keyword_coverage < DECISIVE_COVERAGE:
        return ""
    return f"keyword top hit has {keyword_coverage:.0%} of the query's words"
