from __future__ import annotations

import json
from pathlib import Path

import pytest
from codesearch.orchestrator.router import classify
from codesearch.v1 import search_pb2 as pb

CASES = [
    ("where is parseConfig defined", pb.INTENT_FIND_DEFINITION, "parseConfig"),
    ("def parse_config", pb.INTENT_FIND_DEFINITION, "parse_config"),
    ("class HTTPServer", pb.INTENT_FIND_DEFINITION, "HTTPServer"),
    ("parse_config", pb.INTENT_FIND_DEFINITION, "parse_config"),
    ("BooleanOptionalAction", pb.INTENT_FIND_DEFINITION, "BooleanOptionalAction"),
    ("who calls make_archive", pb.INTENT_FIND_REFERENCES, "make_archive"),
    ("usages of urlsplit", pb.INTENT_FIND_REFERENCES, "urlsplit"),
    ("references to Foo.bar", pb.INTENT_FIND_REFERENCES, "Foo.bar"),
    ("what depends on module email.utils", pb.INTENT_IMPACT_ANALYSIS, "email.utils"),
    ("what breaks if I change email.utils", pb.INTENT_IMPACT_ANALYSIS, "email.utils"),
    ("blast radius of shutil", pb.INTENT_IMPACT_ANALYSIS, "shutil"),
    ('"connection refused"', pb.INTENT_EXACT_MATCH, "connection refused"),
    ('find "connection refused"', pb.INTENT_EXACT_MATCH, "connection refused"),
    ("ValueError", pb.INTENT_EXACT_MATCH, "ValueError"),
    ("ECONNREFUSED", pb.INTENT_EXACT_MATCH, "ECONNREFUSED"),
    ("how does auth work", pb.INTENT_UNDERSTAND_CODE, ""),
    ("explain the architecture of the scheduler", pb.INTENT_UNDERSTAND_CODE, ""),
    ("code similar to this retry loop", pb.INTENT_FIND_SIMILAR, ""),
    ("retry loop with exponential backoff for flaky sockets", pb.INTENT_UNDERSTAND_CODE, ""),
    ("def parse_config(path):", pb.INTENT_FIND_DEFINITION, "parse_config"),
    ("from email import utils", pb.INTENT_FIND_DEFINITION, "email"),
    # Prose that starts with a keyword-like word is not code.
    ("Interface representing a bidirectional transport.", pb.INTENT_UNDERSTAND_CODE, ""),
    ("function arguments keyword arguments.", pb.INTENT_UNDERSTAND_CODE, ""),
    ("Enum where members are also (and must be) ints", pb.INTENT_UNDERSTAND_CODE, ""),
]


@pytest.mark.parametrize(("query", "intent", "target"), CASES)
def test_rules(query: str, intent: int, target: str) -> None:
    route = classify(query)
    assert (route.intent, route.target) == (intent, target), route
    assert 0 < route.confidence <= 1
    assert abs(sum(route.weights.values()) - 1.0) < 1e-9


def test_fallback_is_understand_with_low_confidence() -> None:
    route = classify("retry loop with exponential backoff for flaky sockets")
    assert route.rule == "fallback" and route.confidence == 0.40


def test_exact_match_never_weights_semantic() -> None:
    assert classify('"x y"').weights["semantic"] == 0.0


def test_dev_set_phrasings_route_to_their_class(shared_eval: Path) -> None:
    klass_intent = {
        "definition": pb.INTENT_FIND_DEFINITION,
        "references": pb.INTENT_FIND_REFERENCES,
        "exact_match": pb.INTENT_EXACT_MATCH,
        "impact": pb.INTENT_IMPACT_ANALYSIS,
    }
    rows = [json.loads(line) for line in (shared_eval / "dev-queries.jsonl").read_text().splitlines()]
    checked = [r for r in rows if r["klass"] in klass_intent]
    wrong = [r["query"] for r in checked if classify(r["query"]).intent != klass_intent[r["klass"]]]
    assert len(wrong) <= 0.02 * len(checked), wrong[:20]
