"""Meaning queries answered word for word by the keyword leg: the vector leg steps aside (adaptive.py)."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
from codesearch.config import Settings
from codesearch.orchestrator.ranking.adaptive import decisive, keyword_coverage
from codesearch.server import registrars
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc, vector_pb2, vector_pb2_grpc

from tests.fixture_types import StartServer

RETRY_PY = '''"""Network helpers."""


def call_with_retries(fn, attempts=5):
    """Call fn again after a failure, waiting twice as long before each new attempt."""
    pause = 0.05
    while attempts > 0:
        attempts -= 1
        try:
            return fn()
        except ConnectionError:
            time.sleep(pause)
            pause = pause * 2
    return None


def parse_header(line):
    """Split an HTTP header line into its name and value."""
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()
'''


def hit(snippet: str, leg: common_pb2.Leg = common_pb2.LEG_KEYWORD) -> common_pb2.Hit:
    return common_pb2.Hit(snippet=snippet, leg_scores=[common_pb2.LegScore(leg=leg, rank=0, score=1.0)])


def test_coverage_counts_the_query_words_in_the_top_hit() -> None:
    top = hit('def parse_header(line):\n    """Split an HTTP header line into its name and value."""')
    assert keyword_coverage("Split an HTTP header line into its name and value.", [top]) == 1.0
    assert keyword_coverage("break a request field into key and content", [top]) < 0.5
    assert keyword_coverage("anything", []) == 0.0
    assert keyword_coverage("a", [top]) == 0.0  # no word long enough to count


def test_only_meaning_intents_adapt() -> None:
    top = [hit("split an http header line")]
    covered = keyword_coverage("split an HTTP header line", top)
    assert "query's words" in decisive(search_pb2.INTENT_UNDERSTAND_CODE, covered)
    assert not decisive(search_pb2.INTENT_FIND_DEFINITION, covered)
    assert not decisive(search_pb2.INTENT_UNDERSTAND_CODE, keyword_coverage("tokenise a request field", top))


def test_a_quoted_docstring_skips_the_vector_leg_and_a_paraphrase_uses_it(
    tmp_path: Path, start_server: StartServer
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "net.py").write_text(RETRY_PY)
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, ("keyword", "vector", "graph", "orchestrator")))
    channel = grpc.insecure_channel(server.address)
    stub = search_pb2_grpc.SearchServiceStub(channel)
    list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(repo), name="demo")))
    vectors = vector_pb2_grpc.VectorServiceStub(channel)
    deadline = time.monotonic() + 120
    while vectors.GetVectorStats(vector_pb2.GetVectorStatsRequest()).repositories[0].pending:
        assert time.monotonic() < deadline, "embeddings did not finish"
        time.sleep(0.2)

    def vector_report(resp: search_pb2.SearchResponse) -> common_pb2.LegReport:
        return next(r for r in resp.legs if r.leg == common_pb2.LEG_VECTOR)

    quoted = stub.Search(
        search_pb2.SearchRequest(query="Split an HTTP header line into its name and value.", no_cache=True)
    )
    assert quoted.intent == search_pb2.INTENT_UNDERSTAND_CODE
    assert quoted.strategy == search_pb2.STRATEGY_SCORE_FUSION  # a meaning question: the legs' scores fused
    assert quoted.hits[0].symbol == "parse_header"
    report = vector_report(quoted)
    # Dropped whichever leg answered first (fanout._settle_early).
    assert report.status == common_pb2.LEG_STATUS_SKIPPED and report.reason.startswith("not needed"), report
    assert common_pb2.LEG_VECTOR not in quoted.hits[0].found_by

    paraphrase = stub.Search(
        search_pb2.SearchRequest(query="wait longer and longer between tries of a flaky call", no_cache=True)
    )
    report = vector_report(paraphrase)
    assert report.status == common_pb2.LEG_STATUS_OK and report.weight > 0 and report.reason == ""
    assert paraphrase.hits[0].symbol == "call_with_retries"
    assert min(quoted.confidence, paraphrase.confidence) > 0.9  # both answers are right, and both say so
