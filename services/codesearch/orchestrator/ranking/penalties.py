"""Path penalties: generated code and tests are rarely what a searcher wants, unless the query asks for tests."""

from __future__ import annotations

import re

from codesearch.orchestrator.ranking.fusion import FusedHit

DEMOTE_GENERATED = 0.5  # generated, vendored, built or minified code is rarely what anyone is looking for
DEMOTE_TESTS = 0.8  # tests mention everything they test; demote them unless the query is about tests

GENERATED_PATH = re.compile(
    r"(^|/)(vendor|third_party|node_modules|dist|build|target|generated|gen)/|_pb2(_grpc)?\.py$|\.pb\.go$|\.min\.(js|css)$|\.generated\.",
)
TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.(go|py)$|\.(test|spec)\.[jt]sx?$"
)
TEST_WORDS = re.compile(r"\b(test|tests|testing|pytest|unittest|spec|mock)\b", re.IGNORECASE)


def apply_path_penalties(hits: list[FusedHit], query: str) -> None:
    """Scales down generated paths, and test paths when the query is not about tests (in place)."""
    mentions_tests = bool(TEST_WORDS.search(query))
    for f in hits:
        path = f.hit.location.path
        if GENERATED_PATH.search(path):
            f.scale("generated_path", DEMOTE_GENERATED)
        if not mentions_tests and TEST_PATH.search(path):
            f.scale("test_path", DEMOTE_TESTS)
