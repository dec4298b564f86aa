"""Intent classification: ordered rules as data, first match wins; deterministic and well under 1 ms.

Each intent weights four modalities: semantic (vector), text (keyword + trigram), structural (definitions),
graph (callers / impact). The priors come from the design; tuning changes them only with measurements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codesearch.orchestrator.query import QueryLike, as_query
from codesearch.orchestrator.query_terms import last_segment
from codesearch.v1 import search_pb2

# At or above this, only the dominant modality is asked (and every leg when it finds nothing: search.py). 0.85:
# "where is X defined" (0.95) still goes straight to the definition, but a bare snake_case/CamelCase name (0.80)
# asks keyword, definitions and callers and is ranked by ranking/signals.py: its labelled answers are the
# definition AND the files that use, extend and implement it. Polyglot fit symbol NDCG@10 (run through the server,
# keyword + graph legs): 0.80 -> 0.85 (services/RESULTS.md); the stdlib definition class stays at MRR@10 1.000.
DIRECT_CONFIDENCE = 0.85

MODALITIES = ("semantic", "text", "structural", "graph")

# Modality weights per intent (semantic, text, structural, graph).
INTENT_WEIGHTS: dict[int, tuple[float, float, float, float]] = {
    # Tuned (prior .2/.1/.6/.1): an identifier is not a sentence; without the vector leg the tune half kept every
    # MRR@10 (definition 1.000, ALL .931) and auto's p50 fell from 36.9 to 15.3 ms (no query embedding).
    search_pb2.INTENT_FIND_DEFINITION: (0.0, 0.1, 0.7, 0.2),
    search_pb2.INTENT_FIND_REFERENCES: (0.1, 0.2, 0.2, 0.5),
    # Tuned (prior .5/.2): on the dev set's tune half, concept MRR@10 .718 at .5/.2, .832 at .2/.5, .868 at .1/.6;
    # on the paraphrase set .244, .240, .221. .2/.5 keeps meaning's share where keywords alone fail.
    # Polyglot fit repositories with the static vector tier, after ranking/signals.py
    # (codesearch_lab/offline.py, NDCG@10): semantic 0.2 / 0.35 / 0.5 / 0.75 / 1.0 -> 0.855 / 0.851 / 0.856 /
    # 0.857 / 0.852: flat, so 0.2 stayed. With the `+stdlib` static model and boosted queries
    # (config.DEFAULT_STATIC_MODEL), replayed over its leg dumps, fit / paraphrase set nDCG@10: 0.2 .879/.255,
    # .35 .881/.264, .4 .881/.264, .5 .882/.270, .6 .883/.260, .75 .882/.265, 1.0 .887/.264, 2.0 .881/.267;
    # dev concept MRR@10 .946 -> .944 (.35) -> .941 (1.0). A plateau from .35 up (sums within 0.007): the
    # smallest weight on it, as the dev set loses a little with each step. Those ratios, scaled to sum to 1
    # (weighted RRF ranks the same under any common scale).
    search_pb2.INTENT_UNDERSTAND_CODE: (0.35 / 1.15, 0.5 / 1.15, 0.2 / 1.15, 0.1 / 1.15),
    search_pb2.INTENT_FIND_SIMILAR: (0.4, 0.3, 0.2, 0.1),
    search_pb2.INTENT_IMPACT_ANALYSIS: (0.1, 0.1, 0.1, 0.7),
    search_pb2.INTENT_EXACT_MATCH: (0.0, 0.9, 0.1, 0.0),
}

# Every pattern below is free of ambiguous nested or adjacent quantifiers, so Python's backtracking engine runs
# in time linear in the query (tests/orchestrator/test_router_regexes.py times each rule on hostile input).
IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
# IDENT.IDENT written with one repetition: two IDENTs side by side may split at any dot (quadratic backtracking).
DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
# The strings the earlier `_*(?:[A-Z][a-z0-9]+){2,}[A-Za-z0-9]*|_*[a-z]+(?:[A-Z][a-z0-9]*)+` matched when
# compiled case-insensitively (as every non-`case` rule is): a letter, then alphanumerics, where the second
# character is a letter or a letter follows later with one more character after it. That form nests
# quantifiers (2**n backtracking: 25 letters took 2 s); this one is the same language, decided by one
# lookahead. The equivalence is checked by brute force in the router tests.
CAMEL_CASE = r"^\s*(?P<t>_*(?=[A-Za-z](?:[A-Za-z]|[A-Za-z0-9]+[A-Za-z][A-Za-z0-9]))[A-Za-z][A-Za-z0-9]*)\s*$"
# No rule looks past this: the API refuses longer queries (config.MAX_QUERY_CHARS), and a longer text is prose.
MAX_ROUTED_CHARS = 2048
ERRNO_NAMES = r"E(?:NOENT|ACCES|PERM|EXIST|AGAIN|CONNREFUSED|CONNRESET|PIPE|INVAL|NOTDIR|ISDIR|TIMEDOUT|ADDRINUSE|NOMEM|BADF)"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    intent: search_pb2.Intent
    confidence: float
    target_group: str | None  # regex group that holds the symbol/module/string the intent is about


def _r(
    name: str,
    pattern: str,
    intent: search_pb2.Intent,
    confidence: float,
    group: str | None = "t",
    case: bool = False,
) -> Rule:
    flags = re.DOTALL if case else re.IGNORECASE | re.DOTALL
    return Rule(name, re.compile(pattern, flags), intent, confidence, group)


# Ordered: the first rule that matches wins.
RULES: tuple[Rule, ...] = (
    _r("quoted", r'^\s*(?P<q>["\'`])(?P<t>.+)(?P=q)\s*$', search_pb2.INTENT_EXACT_MATCH, 0.90),
    _r(
        "find_quoted",
        r'^\s*(?:find|grep|search(?: for)?)\s+(?P<q>["\'`])(?P<t>.+)(?P=q)\s*$',
        search_pb2.INTENT_EXACT_MATCH,
        0.90,
    ),
    # Code as typed: a lower-case keyword, a name, and at most a parameter list or base after it. Case matters:
    # "Interface representing a transport" is prose, "interface Transport" is code.
    _r(
        "keyword_lead",
        rf"^\s*(?:def|class|func|fn|function|struct|interface|trait|type|enum)\s+(?P<t>{IDENT})\s*(?:[(:<{{\[].*)?$",
        search_pb2.INTENT_FIND_DEFINITION,
        0.95,
        case=True,
    ),
    _r(
        "import_lead",
        rf"^\s*(?:import|from)\s+(?P<t>{IDENT})(?:\s+import\s+[\w, ]+)?\s*$",
        search_pb2.INTENT_FIND_DEFINITION,
        0.95,
        case=True,
    ),
    _r(
        "where_defined",
        rf"^\s*(?:where\s+is|where's|find|show(?:\s+me)?|go\s+to)\s+(?:the\s+)?(?:definition\s+of\s+)?(?P<t>{IDENT})(?:\(\))?\s+(?:defined|declared|implemented)\??\s*$",
        search_pb2.INTENT_FIND_DEFINITION,
        0.95,
    ),
    _r(
        "definition_of",
        rf"^\s*(?:definition|declaration)\s+of\s+(?P<t>{IDENT})\??\s*$",
        search_pb2.INTENT_FIND_DEFINITION,
        0.95,
    ),
    _r(
        "who_calls",
        rf"^\s*(?:who|what)\s+(?:calls|uses|invokes)\s+(?P<t>{IDENT})(?:\(\))?\??\s*$",
        search_pb2.INTENT_FIND_REFERENCES,
        0.90,
    ),
    _r(
        "usages",
        rf"^\s*(?:usages?|uses|references?|callers?|call\s+sites?)\s+(?:of|to|for)\s+(?P<t>{IDENT})(?:\(\))?\??\s*$",
        search_pb2.INTENT_FIND_REFERENCES,
        0.90,
    ),
    _r(
        "where_used",
        rf"^\s*where\s+is\s+(?P<t>{IDENT})(?:\(\))?\s+(?:used|called|referenced)\??\s*$",
        search_pb2.INTENT_FIND_REFERENCES,
        0.90,
    ),
    _r(
        "depends_on",
        rf"^\s*what\s+(?:depends\s+on|imports|uses\s+module)\s+(?:module\s+)?(?P<t>{IDENT})\??\s*$",
        search_pb2.INTENT_IMPACT_ANALYSIS,
        0.90,
    ),
    _r(
        "what_breaks",
        rf"^\s*what\s+(?:breaks|would\s+break|is\s+affected)\s+if\s+I\s+(?:change|modify|remove|delete)\s+(?:module\s+)?(?P<t>{IDENT})\??\s*$",
        search_pb2.INTENT_IMPACT_ANALYSIS,
        0.90,
    ),
    _r(
        "impact_of",
        rf"^\s*(?:impact|blast\s+radius|dependents)\s+(?:of|for)\s+(?:changing\s+)?(?:module\s+)?(?P<t>{IDENT})\??\s*$",
        search_pb2.INTENT_IMPACT_ANALYSIS,
        0.90,
    ),
    _r(
        "impact_words",
        r"\b(?:impact|blast\s+radius|what\s+depends\s+on|what\s+breaks)\b",
        search_pb2.INTENT_IMPACT_ANALYSIS,
        0.75,
        None,
    ),
    _r(
        "traceback",
        r"(?:Traceback \(most recent call last\)|^\s*File \".*\", line \d+)",
        search_pb2.INTENT_EXACT_MATCH,
        0.85,
        None,
    ),
    _r(
        "error_token",
        rf"^\s*(?P<t>(?:[A-Z][A-Za-z0-9]*(?:Error|Exception))|{ERRNO_NAMES})(?::.*)?\s*$",
        search_pb2.INTENT_EXACT_MATCH,
        0.85,
    ),
    _r(
        "similar",
        r"^\s*(?:code\s+)?(?:similar\s+to|like\s+this|find\s+similar)\b",
        search_pb2.INTENT_FIND_SIMILAR,
        0.75,
        None,
    ),
    _r(
        "snake_case",
        r"^\s*(?P<t>_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+_*)\s*$",
        search_pb2.INTENT_FIND_DEFINITION,
        0.80,
    ),
    _r(
        "camel_case",
        CAMEL_CASE,
        search_pb2.INTENT_FIND_DEFINITION,
        0.80,
    ),
    _r("dotted", rf"^\s*(?P<t>{DOTTED})\s*$", search_pb2.INTENT_FIND_DEFINITION, 0.75),
    _r("single_word", r"^\s*(?P<t>_*[A-Za-z][A-Za-z0-9]*_*)\s*$", search_pb2.INTENT_FIND_DEFINITION, 0.60),
    _r(
        "question",
        r"^\s*(?:how|why|explain|what\s+does|what\s+is|where\s+does|when\s+does)\b|\barchitecture\b",
        search_pb2.INTENT_UNDERSTAND_CODE,
        0.75,
        None,
    ),
)
FALLBACK_CONFIDENCE = 0.40  # nothing matched: a description of behaviour, most likely
# A qualified name ("Rack::Response") is a name as surely as a dotted one (the "dotted" rule's 0.75); below
# DIRECT_CONFIDENCE, so its users are asked for too. Polyglot fit symbol NDCG@10 0.909 -> 0.959 (rack:5, rack:6).
QUALIFIED_NAME_CONFIDENCE = 0.75


@dataclass(frozen=True)
class Route:
    intent: search_pb2.Intent
    confidence: float
    rule: str
    target: str  # the symbol, module or literal the query is about ("" when none)
    weights: dict[str, float]


def classify(query: QueryLike) -> Route:
    parsed = as_query(query)
    text = parsed.text
    for rule in RULES if len(text) <= MAX_ROUTED_CHARS else ():
        m = rule.pattern.search(text)
        if m:
            target = m.group(rule.target_group) if rule.target_group else ""
            return Route(rule.intent, rule.confidence, rule.name, target.strip(), weights_for(rule.intent))
    if parsed.is_symbol:
        # A namespace-qualified name no rule spells ("Rack::Response", "absl\\Status"): its last segment.
        intent = search_pb2.INTENT_FIND_DEFINITION
        return Route(
            intent,
            QUALIFIED_NAME_CONFIDENCE,
            "qualified_name",
            last_segment(text.strip()),
            weights_for(intent),
        )
    intent = search_pb2.INTENT_UNDERSTAND_CODE
    return Route(intent, FALLBACK_CONFIDENCE, "fallback", "", weights_for(intent))


def weights_for(intent: int) -> dict[str, float]:
    return dict(zip(MODALITIES, INTENT_WEIGHTS[intent], strict=True))
