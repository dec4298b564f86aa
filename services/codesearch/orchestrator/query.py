"""One query, read once: what every stage of a search (plan, fan-out, ranking, confidence) needs of its text.

`Query.parse` runs when a request arrives; the stages read its fields instead of analysing the string again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

from codesearch.common.text import words as code_tokens
from codesearch.orchestrator.query_terms import content_words, is_symbol_query, query_names

# A description of more than this many content words names one function, not a subsystem: the file-level
# signals (coherence, path words, the vector leg's votes) and the half-strength boost for names inside a sentence
# stand aside, so a busy neighbour file does not outrank it, and the vector leg leads (plan.leans_on_meaning).
# Polyglot questions have 3-10 content words (median 6), the stdlib paraphrases 6-16 (median 10). First chosen
# at 9 on the paraphrase set's tune half (MRR@10, static tier, offline: off 0.123, 7 0.136, 8 0.135, 9 0.136).
# Moved to 8 at stop 34 (chunker version 3, the vector leg's votes, late interaction for long descriptions):
# the 28 paraphrases of exactly 9 words had `semantic` 0.06 above `auto` on both tiers. Through the server,
# nDCG@10 tune / check, static then transformer: 9 0.298 / 0.300, 0.313 / 0.331; the vector leg leading from 9
# words 0.304 / 0.302, 0.329 / 0.331; and the signals standing aside too (this value, offline over that run's
# legs) 0.325 / 0.315, 0.346 / 0.344; 7 cost held-out 0.882 -> 0.874. Polyglot fit / held-out 0.901 / 0.882 and
# the dev set the same at 8 and 9. 0: never.
SPECIFIC_WORDS = 8
# A query about tests: test files are not demoted for it (ranking/recipe.py).
TEST_WORDS = re.compile(r"\b(test|tests|testing|pytest|unittest|spec|mock)\b", re.IGNORECASE)
# A query about documentation or configuration: prose and config files are not demoted for it.
DOCS_WORDS = re.compile(
    r"\b(?:docs?|documentation|readme|guide|tutorial|config(?:uration)?|yaml|markdown|makefile|dockerfile|cmake)\b",
    re.I,
)


@dataclass(frozen=True)
class Query:
    text: str  # as the client typed it
    tokens: frozenset[str]  # code tokens (common/text.words): what keyword coverage counts
    words: frozenset[str]  # content words that may name a file or folder (query_terms.content_words)
    names: tuple[str, ...]  # the names it asks about (query_terms.query_names)
    is_symbol: bool  # the whole query is one identifier, perhaps namespace-qualified
    is_specific: bool  # a long description of one function (more than SPECIFIC_WORDS content words)
    mentions_tests: bool  # TEST_WORDS
    wants_docs: bool  # DOCS_WORDS

    @classmethod
    def parse(cls, text: str, specific_words: int = SPECIFIC_WORDS) -> Query:
        """`specific_words`: SPECIFIC_WORDS, or another value for an offline ablation (0: never specific)."""
        words = frozenset(content_words(text))
        return cls(
            text=text,
            tokens=frozenset(code_tokens(text)),
            words=words,
            names=tuple(query_names(text)),
            is_symbol=is_symbol_query(text),
            is_specific=bool(specific_words) and len(words) > specific_words,
            mentions_tests=bool(TEST_WORDS.search(text)),
            wants_docs=bool(DOCS_WORDS.search(text)),
        )


# The server passes the Query it made; replays in eval/ may still pass the text.
QueryLike: TypeAlias = Query | str


def as_query(query: QueryLike) -> Query:
    return query if isinstance(query, Query) else Query.parse(query)
