"""Which Search calls are expensive: those go through the orchestrator's admission gate (common/admission.py).

A cheap query (a name, a short phrase, a literal) never waits behind them; each leg gates its own expensive
work too (common/admission.py's LegAdmission: full scans, long texts, big limits), so a client calling a leg directly is bounded the same.
"""

from __future__ import annotations

from codesearch.common.admission import LONG_TEXT_CHARS, full_scan
from codesearch.v1 import search_pb2


def is_expensive(request: search_pb2.SearchRequest) -> bool:
    if len(request.query) > LONG_TEXT_CHARS:
        return True
    if request.mode in (search_pb2.SEARCH_MODE_REGEX, search_pb2.SEARCH_MODE_LITERAL):
        regex = request.mode == search_pb2.SEARCH_MODE_REGEX
        if request.query and full_scan(request.query, regex, request.case_sensitive):
            return True
    return request.preset == search_pb2.PRESET_THOROUGH or request.rerank == search_pb2.RERANK_POLICY_ON
