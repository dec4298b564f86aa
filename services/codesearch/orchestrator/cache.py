"""Query cache: a response is reused only for the same request over the same index versions.

The key holds the normalised query, every request option and each searched repository's index version, so a
re-index invalidates entries by itself. The ranking configuration is not in it: the cache lives in the process,
and the process runs one configuration.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict

from codesearch.v1 import common_pb2, search_pb2

CACHE_ENTRIES = 1024  # a few MB of responses; covers an agent's repeated lookups within a session


# An answer given while a leg was degraded (it will be back) or answered over part of its data (embeddings still
# filling in) is not repeated: neither changes the index version in the key, so the cache could not tell. Nor
# is one a leg gave from a lesser tier while a better one fills in (LegReport.upgrading), for the same reason.
UNCACHED_STATUSES = frozenset({common_pb2.LEG_STATUS_DEGRADED, common_pb2.LEG_STATUS_PARTIAL})


def cacheable(response: search_pb2.SearchResponse) -> bool:
    """Whether an answer is worth repeating: every leg that was asked answered over all of its data."""
    return not any(r.status in UNCACHED_STATUSES or r.upgrading for r in response.legs)


def normalise(query: str) -> str:
    return " ".join(query.split())


def request_key(request: search_pb2.SearchRequest, versions: dict[str, int]) -> str:
    parts = {
        "q": normalise(request.query),
        "repos": sorted(versions.items()),
        "mode": request.mode,
        "preset": request.preset,
        "limit": request.limit,
        "case": request.case_sensitive,
        "langs": sorted(request.languages),
        "glob": request.path_glob,
        "rerank": request.rerank,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class QueryCache:
    def __init__(self, capacity: int = CACHE_ENTRIES) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> search_pb2.SearchResponse | None:
        raw = self._entries.get(key)
        if raw is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return search_pb2.SearchResponse.FromString(raw)

    def put(self, key: str, response: search_pb2.SearchResponse) -> None:
        self._entries[key] = response.SerializeToString()  # a copy: callers may mutate their response
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
