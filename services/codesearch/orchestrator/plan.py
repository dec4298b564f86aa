"""The plan of one search, as data: for each leg the request it is sent, its weight in fusion and its time budget.

`plan_search` reads the mode, the preset, the query and the router's verdict and says which legs to ask and how,
how to fuse their answers, whether the keyword leg's answer may settle the query, and what to ask next if a
direct plan finds nothing; it calls nothing, and nothing rewrites a plan once made. The fan-out (fanout.py) sends
each leg exactly the request written here, with the budget written here (cut to the search's deadline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from codesearch.common.errors import invalid
from codesearch.orchestrator.query import Query, QueryLike, as_query
from codesearch.orchestrator.ranking import adaptive
from codesearch.orchestrator.ranking.fusion import Leg, fuses_scores
from codesearch.orchestrator.router import DIRECT_CONFIDENCE, Route, weights_for
from codesearch.v1 import common_pb2, graph_pb2, keyword_pb2, search_pb2, vector_pb2

LEG_DEPTH = 50  # hits asked of each leg: enough for fusion to find agreement below the top 10
# A long description of one function (Query.is_specific: more than 8 content words, e.g. "how does dict-style log
# setup wrap nested dicts and lists so prefixed strings get resolved lazily") names what the code does in words the
# code seldom repeats: the vector leg leads (its weight times this), asked with token late interaction,
# and the keyword leg breaks ties. Chosen on the tune half of the stdlib paraphrase set when "long" was more than 9
# words (85 of its 130 questions were that long, 1 of the 417 polyglot ones; at 8: 113 and 5), nDCG@10 static /
# transformer tier, replayed over the server's leg answers: 1 (before) 0.245 / 0.269, 3 0.265 / 0.302, 10 0.278 /
# 0.305, 30 0.289 / 0.297, 100 0.290 / 0.285; without late interaction every factor lost (30: 0.227 / 0.231). Check
# half at 30: 0.284 -> 0.302 / 0.313 -> 0.329.
LONG_DESCRIPTION_VECTOR_FACTOR = 30.0
# A meaning question whose words as written do not meet in one chunk (the keyword leg's first hit holds less than
# this share of them: the share from which that hit settles the query, adaptive.py) lets the keyword leg answer
# from word stems, where the stems bring more of its words into the first hit (keyword_pb2 stem_below_coverage;
# "cookie signing" finds `signed_cookie`). Polyglot NDCG@10, fit half, replayed over the server's leg answers with
# stemmed lists asked from stemmed copies of the same indexes: as written 0.901; stems for every meaning question
# 0.909, and stems added to the words at weight 0.25-3.0 0.906-0.909, but those cost the stdlib concept class 0.946
# -> 0.913 MRR@10 (docstring lines whose words all stand in one chunk), quoted strings 0.853 -> 0.818 and long
# descriptions (leans_on_meaning) the paraphrase set 0.320 -> 0.307 nDCG@10; asked only below this share, 0.909
# with the paraphrase set down 0.002 MRR@10 (two questions); only where the stems bring more words together
# (shipped) 0.907 with it unchanged. Through the server, same home: fit 0.901 -> 0.907, held-out 0.882 -> 0.888,
# dev concept 0.946 -> 0.945, paraphrases 0.288 MRR@10 unchanged.
STEM_BELOW_COVERAGE = adaptive.DECISIVE_COVERAGE
# The service that answers each leg.
LEG_SERVICE: dict[int, str] = {
    common_pb2.LEG_KEYWORD: "keyword",
    common_pb2.LEG_TRIGRAM: "keyword",
    common_pb2.LEG_VECTOR: "vector",
    common_pb2.LEG_DEFINITION: "graph",
    common_pb2.LEG_REFERENCES: "graph",
    common_pb2.LEG_IMPACT: "graph",
}
QUICK_LEGS = (
    common_pb2.LEG_KEYWORD,
    common_pb2.LEG_VECTOR,
    common_pb2.LEG_TRIGRAM,
)  # the quick preset's legs


@dataclass(frozen=True)
class LegPlan:
    leg: Leg
    weight: float
    request: Message | None  # the message sent to the leg; None: the leg is not asked
    budget_s: float  # the leg's deadline, passed to its RPC
    skip_reason: str = ""


@dataclass(frozen=True)
class Plan:
    """strategy: STRATEGY_SCORE_FUSION fuses the legs' scores, the others their ranks (ranking/fusion.py).
    settles: the keyword leg's answer may settle the query, and the vector leg's is then dropped
    (ranking/adaptive.py). fallback: asked instead when every leg of this plan answers nothing (a direct plan:
    the one leg the router trusted found nothing, say a name defined nowhere)."""

    strategy: search_pb2.Strategy
    route: Route
    legs: list[LegPlan] = field(default_factory=list)
    settles: bool = False
    fallback: Plan | None = None

    @property
    def routed(self) -> bool:
        """The router chose the legs (not a forced mode or the naive baseline)."""
        return self.strategy not in (search_pb2.STRATEGY_FORCED, search_pb2.STRATEGY_NAIVE_RRF)


@dataclass(frozen=True)
class Scope:
    """What every leg request shares: where to search and the client's filters."""

    repositories: list[str]
    languages: list[str]
    path_glob: str
    case_sensitive: bool

    @classmethod
    def of(cls, request: search_pb2.SearchRequest, repositories: list[str]) -> Scope:
        return cls(repositories, list(request.languages), request.path_glob, request.case_sensitive)


def plan_search(
    request: search_pb2.SearchRequest,
    query: Query,
    route: Route,
    scope: Scope,
    available: set[str],
    budget_s: float,
) -> Plan:
    """The plan for a request. `available`: the services configured; `budget_s`: each leg's deadline."""
    mode = request.mode or search_pb2.SEARCH_MODE_AUTO
    preset = request.preset or search_pb2.PRESET_DEFAULT
    text = query.text

    def ask(leg: Leg, weight: float, message: Message) -> LegPlan:
        service = LEG_SERVICE[leg]
        if service not in available:
            return LegPlan(leg, weight, None, budget_s, f"{service} service is not configured")
        return LegPlan(leg, weight, message, budget_s)

    forced = _forced(mode, text, route, scope)
    if forced is not None:
        leg, intent, message = forced
        forced_route = Route(intent, 1.0, "forced", text, weights_for(intent))
        return Plan(search_pb2.STRATEGY_FORCED, forced_route, [ask(leg, 1.0, message)])
    if mode == search_pb2.SEARCH_MODE_NAIVE_HYBRID:
        legs = [
            ask(common_pb2.LEG_KEYWORD, 1.0, keyword_request(text, scope)),
            ask(common_pb2.LEG_VECTOR, 1.0, vector_request(text, scope)),
        ]
        return Plan(search_pb2.STRATEGY_NAIVE_RRF, route, legs)
    if mode != search_pb2.SEARCH_MODE_AUTO:
        raise invalid(f"unknown search mode {mode}")

    weights = routed_weights(route, preset, query)
    target = route.target or text.strip()

    def routed(weights: dict[Leg, float]) -> list[LegPlan]:
        legs = []
        for leg, weight in sorted(weights.items(), key=lambda kv: -kv[1]):
            if weight <= 0:
                legs.append(LegPlan(leg, 0.0, None, budget_s, "weight 0 for this intent"))
            else:
                legs.append(ask(leg, weight, _routed_request(leg, route, query, target, scope)))
        return legs

    if route.confidence >= DIRECT_CONFIDENCE and preset != search_pb2.PRESET_THOROUGH:
        top = max(weights, key=lambda leg: weights[leg])
        every_leg = Plan(search_pb2.STRATEGY_RRF_AFTER_DIRECT, route, routed(weights))
        return Plan(search_pb2.STRATEGY_DIRECT, route, routed({top: weights[top]}), fallback=every_leg)
    by_scores = fuses_scores(route.intent, query.is_specific)
    strategy = search_pb2.STRATEGY_SCORE_FUSION if by_scores else search_pb2.STRATEGY_RRF
    return Plan(strategy, route, routed(weights), settles=route.intent in adaptive.ADAPTIVE_INTENTS)


def routed_weights(route: Route, preset: int, query: QueryLike) -> dict[Leg, float]:
    """Each leg's fusion weight from the router's modality weights (insertion order breaks ties)."""
    w = route.weights
    weights: dict[Leg, float] = {
        common_pb2.LEG_VECTOR: w["semantic"],
        common_pb2.LEG_KEYWORD: w["text"],
        common_pb2.LEG_DEFINITION: w["structural"],
    }
    if route.intent == search_pb2.INTENT_EXACT_MATCH:
        weights[common_pb2.LEG_TRIGRAM] = w["text"]
        weights[common_pb2.LEG_KEYWORD] = w["text"] / 2
    if route.intent == search_pb2.INTENT_IMPACT_ANALYSIS:
        weights[common_pb2.LEG_IMPACT] = w["graph"]
    elif route.target:
        weights[common_pb2.LEG_REFERENCES] = w["graph"]
    if not route.target:
        weights.pop(common_pb2.LEG_DEFINITION, None)
    if leans_on_meaning(route, query):
        weights[common_pb2.LEG_VECTOR] *= LONG_DESCRIPTION_VECTOR_FACTOR
    if preset == search_pb2.PRESET_QUICK:
        weights = {leg: wt for leg, wt in weights.items() if leg in QUICK_LEGS}
    return weights


def leans_on_meaning(route: Route, query: QueryLike) -> bool:
    """A question about meaning that is a long description of one function (LONG_DESCRIPTION_VECTOR_FACTOR)."""
    return route.intent == search_pb2.INTENT_UNDERSTAND_CODE and as_query(query).is_specific


def _forced(
    mode: int, query: str, route: Route, scope: Scope
) -> tuple[Leg, search_pb2.Intent, Message] | None:
    """(leg, implied intent, request) for a forced mode; None for AUTO and the naive baseline.

    A forced mode asks one leg with the query as typed (a definition/callers/impact query may still be phrased,
    so those use the router's target when it found one)."""
    name = route.target or query.strip()
    if mode == search_pb2.SEARCH_MODE_KEYWORD:
        return common_pb2.LEG_KEYWORD, search_pb2.INTENT_UNDERSTAND_CODE, keyword_request(query, scope)
    if mode in (search_pb2.SEARCH_MODE_LITERAL, search_pb2.SEARCH_MODE_REGEX):
        regex = mode == search_pb2.SEARCH_MODE_REGEX
        return common_pb2.LEG_TRIGRAM, search_pb2.INTENT_EXACT_MATCH, grep_request(query, regex, scope)
    if mode == search_pb2.SEARCH_MODE_SEMANTIC:
        request = vector_request(query, scope, semantic_mode=True)
        return common_pb2.LEG_VECTOR, search_pb2.INTENT_UNDERSTAND_CODE, request
    if mode == search_pb2.SEARCH_MODE_DEFINITION:
        return common_pb2.LEG_DEFINITION, search_pb2.INTENT_FIND_DEFINITION, definitions_request(name, scope)
    if mode == search_pb2.SEARCH_MODE_CALLERS:
        return common_pb2.LEG_REFERENCES, search_pb2.INTENT_FIND_REFERENCES, references_request(name, scope)
    if mode == search_pb2.SEARCH_MODE_CALLEES:
        callees = graph_pb2.FindCalleesRequest(
            repositories=scope.repositories, name=query.strip(), limit=LEG_DEPTH, **_filters(scope)
        )
        return common_pb2.LEG_REFERENCES, search_pb2.INTENT_FIND_REFERENCES, callees
    if mode == search_pb2.SEARCH_MODE_IMPACT:
        return common_pb2.LEG_IMPACT, search_pb2.INTENT_IMPACT_ANALYSIS, impact_request(name, scope)
    return None


def _routed_request(leg: Leg, route: Route, query: Query, target: str, scope: Scope) -> Message:
    """What a routed leg is asked: meaning legs the whole query, exact and structural legs the router's target."""
    if leg == common_pb2.LEG_KEYWORD:
        return keyword_request(query.text, scope, keyword_stem_coverage(route, query))
    if leg == common_pb2.LEG_TRIGRAM:
        return grep_request(target, False, scope)
    if leg == common_pb2.LEG_VECTOR:
        return routed_vector_request(route, query, scope)
    if leg == common_pb2.LEG_DEFINITION:
        return definitions_request(target, scope)
    if leg == common_pb2.LEG_REFERENCES:
        return references_request(target, scope)
    return impact_request(target, scope)


def keyword_stem_coverage(route: Route, query: QueryLike) -> float:
    """Below what share of its words in the first hit a routed query's keyword answer turns to word stems
    (STEM_BELOW_COVERAGE; 0: never)."""
    if route.intent != search_pb2.INTENT_UNDERSTAND_CODE or leans_on_meaning(route, query):
        return 0.0
    return STEM_BELOW_COVERAGE


def keyword_request(
    query: str, scope: Scope, stem_below_coverage: float = 0.0
) -> keyword_pb2.KeywordSearchRequest:
    return keyword_pb2.KeywordSearchRequest(
        repositories=scope.repositories,
        query=query,
        limit=LEG_DEPTH,
        languages=scope.languages,
        path_glob=scope.path_glob,
        stem_below_coverage=stem_below_coverage,
    )


def grep_request(pattern: str, regex: bool, scope: Scope) -> keyword_pb2.GrepRequest:
    return keyword_pb2.GrepRequest(
        repositories=scope.repositories,
        pattern=pattern,
        syntax=keyword_pb2.PATTERN_SYNTAX_REGEX if regex else keyword_pb2.PATTERN_SYNTAX_LITERAL,
        case_sensitive=scope.case_sensitive,
        limit=LEG_DEPTH,
        languages=scope.languages,
        path_glob=scope.path_glob,
    )


def routed_vector_request(route: Route, query: QueryLike, scope: Scope) -> vector_pb2.VectorSearchRequest:
    """What routed `auto` asks the vector leg: late interaction only where the vector leg leads."""
    query = as_query(query)
    return vector_request(query.text, scope, late_interaction=leans_on_meaning(route, query))


def vector_request(
    query: str, scope: Scope, semantic_mode: bool = False, late_interaction: bool = False
) -> vector_pb2.VectorSearchRequest:
    """Where the static tier answers, the query is boosted by the transformer in every mode (vector/query_boost.py;
    the transformer tier, once complete, embeds every query with it anyway), and `semantic_mode` scores with the
    semantic-mode static model where CODESEARCH_STATIC_SEMANTIC_MODEL names another (vector/mode_models.py). With
    the `+stdlib` static model the boost in `auto` moved the 10 fit polyglot repositories 0.882 -> 0.879 nDCG@10
    and the paraphrase set 0.240 -> 0.247 (held-out: 0.855 -> 0.858, architecture 0.814 -> 0.829; README "Vector
    tiers"): within 0.003 of the plain query on the fit half, better on paraphrases, and the tier upgrade then no
    longer changes which encoder reads the query. `semantic_mode` also asks for token late interaction
    (vector/late_interaction.py): it lifted `semantic` there and lost routed `auto` on held-out repositories, so
    `auto` asks for it only where the vector leg leads (`late_interaction`, routed_vector_request)."""
    return vector_pb2.VectorSearchRequest(
        repositories=scope.repositories,
        text=query,
        limit=LEG_DEPTH,
        languages=scope.languages,
        path_glob=scope.path_glob,
        semantic_static_model=semantic_mode,
        late_interaction=semantic_mode or late_interaction,
    )


def definitions_request(name: str, scope: Scope) -> graph_pb2.FindDefinitionsRequest:
    language = scope.languages[0] if len(scope.languages) == 1 else ""
    return graph_pb2.FindDefinitionsRequest(
        repositories=scope.repositories, name=name, limit=LEG_DEPTH, language=language, **_filters(scope)
    )


def references_request(name: str, scope: Scope) -> graph_pb2.FindReferencesRequest:
    return graph_pb2.FindReferencesRequest(
        repositories=scope.repositories, name=name, limit=LEG_DEPTH, **_filters(scope)
    )


def impact_request(target: str, scope: Scope) -> graph_pb2.ImpactRequest:
    return graph_pb2.ImpactRequest(
        repositories=scope.repositories, target=target, limit=LEG_DEPTH, **_filters(scope)
    )


def _filters(scope: Scope) -> dict[str, Any]:
    """The Search filters every graph request carries (issue 20: the leg applies them)."""
    return {"languages": scope.languages, "path_glob": scope.path_glob}
