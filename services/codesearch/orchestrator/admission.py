"""Which Search calls are expensive: those go through the orchestrator's admission gate (common/admission.py).

A cheap query (a name, a short phrase, a literal) never waits behind them; each leg gates its own expensive
work too (the keyword leg its full scans), so a client calling a leg directly is bounded the same.
"""

from __future__ import annotations

from codesearch.common.admission import full_scan
from codesearch.v1 import search_pb2

# Longer than any question a person types (the longest of the 605 dev-set queries is 164 characters): a pasted text, whose
# many terms cost every leg more (BM25 terms, trigram conditions, embedding tokens).
LONG_QUERY_CHARS = 256


def is_expensive(request: search_pb2.SearchRequest) -> bool:
    if len(request.query) > LONG_QUERY_CHARS:
        return True
    if request.mode in (search_pb2.SEARCH_MODE_REGEX, search_pb2.SEARCH_MODE_LITERAL):
        regex = request.mode == search_pb2.SEARCH_MODE_REGEX
        if request.query and full_scan(request.query, regex, request.case_sensitive):
            return True
    return request.preset == search_pb2.PRESET_THOROUGH or request.rerank == search_pb2.RERANK_POLICY_ON
