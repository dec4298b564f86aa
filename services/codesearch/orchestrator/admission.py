"""Which Search calls are expensive: those go through the orchestrator's admission gate (common/admission.py).

A cheap query (a name, a short phrase, a literal) never waits behind them; each leg gates its own expensive
work too (the keyword leg its regexes and full scans), so a client calling a leg directly is bounded the same.
"""

from __future__ import annotations

from codesearch.v1 import search_pb2

# Longer than any question a person types (the dev sets' longest is ~120 characters): a pasted text, whose
# many terms cost every leg more (BM25 terms, trigram conditions, embedding tokens).
LONG_QUERY_CHARS = 256
# A literal shorter than a trigram requires nothing of the index: every file is read.
MIN_INDEXED_LITERAL = 3


def is_expensive(request: search_pb2.SearchRequest) -> bool:
    query = request.query.strip()
    if request.mode == search_pb2.SEARCH_MODE_REGEX or len(query) > LONG_QUERY_CHARS:
        return True
    if request.mode == search_pb2.SEARCH_MODE_LITERAL and len(query) < MIN_INDEXED_LITERAL:
        return True
    return request.preset == search_pb2.PRESET_THOROUGH or request.rerank == search_pb2.RERANK_POLICY_ON
