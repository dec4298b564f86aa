"""Ranking signals over real fused lists (the native RRF), one signal at a time, then the whole order."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import PurePosixPath

from codesearch.orchestrator.query import Query
from codesearch.orchestrator.query_terms import content_words, is_symbol_query, query_names, split_identifier
from codesearch.orchestrator.ranking import recipe, signals
from codesearch.orchestrator.ranking.fusion import FusedHit, fuse
from codesearch.v1 import common_pb2

NONE = dataclasses.replace(
    signals.without_path_penalties(signals.SHIPPED),
    definition_boost=0.0,
    stem_boost=0.0,
    coherence=0.0,
    vector_coherence=0.0,
    saturation_decay=1.0,
    question_saturation_decay=1.0,
)


def hit(path: str, start: int, end: int, symbol: str = "", snippet: str = "") -> common_pb2.Hit:
    loc = common_pb2.Location(repository="r", path=path, start_line=start, end_line=end)
    return common_pb2.Hit(location=loc, symbol=symbol, snippet=snippet, score=1.0)


def fused(*hits: common_pb2.Hit) -> list[FusedHit]:
    # Two lists (the second empty) so scores are RRF scores, as in a routed search with several legs.
    return fuse([(common_pb2.LEG_KEYWORD, 1.0, list(hits)), (common_pb2.LEG_VECTOR, 1.0, [])], 60.0)


def rank(
    cands: list[FusedHit],
    query: str,
    definitions: Sequence[common_pb2.Location],
    mentions_tests: bool = False,
    p: signals.Params = signals.SHIPPED,
) -> list[FusedHit]:
    """The one recipe (ranking/recipe.py) over `query`; `mentions_tests` marks it as a question about tests."""
    parsed = Query.parse(query)
    if mentions_tests:
        parsed = dataclasses.replace(parsed, mentions_tests=True)
    return recipe.rank(cands, parsed, definitions, p)


def paths(ranked: Sequence[FusedHit]) -> list[str]:
    return [f"{f.hit.location.path}:{f.hit.location.start_line}" for f in ranked]


def test_query_names_and_words() -> None:
    assert (
        is_symbol_query("RouterGroup")
        and is_symbol_query("Sinatra::Base")
        and is_symbol_query("flat_hash_map")
    )
    assert not is_symbol_query("session") and not is_symbol_query("how routing works")
    assert query_names("Sinatra::Base") == ["Base", "Sinatra::Base"]
    assert query_names("how does HandlerStack compose middleware via pass_context") == [
        "HandlerStack",
        "pass_context",
    ]
    assert split_identifier("HandlerStack") == ["handlerstack", "handler", "stack"]
    assert content_words("how is the bash completion generated") == {"bash", "completion", "generated"}


def test_definition_of_the_queried_name_comes_first() -> None:
    p = dataclasses.replace(NONE, definition_boost=signals.SHIPPED.definition_boost)
    users = [hit(f"use{i}.go", 1, 20, snippet="r := NewRouter()\nr.Group(...)") for i in range(3)]
    by_graph = hit("tree.go", 10, 40)  # the graph leg says RouterGroup is defined at tree.go:12
    by_symbol = hit("group.go", 1, 30, symbol="gin.RouterGroup")
    by_text = hit("misc.kt", 5, 9, snippet="class RouterGroup(val prefix: String) {")  # no graph for it
    ranked = rank(
        fused(*users, by_graph, by_symbol, by_text),
        "RouterGroup",
        [common_pb2.Location(repository="r", path="tree.go", start_line=12, end_line=30)],
        p=p,
    )
    assert set(paths(ranked)[:3]) == {"tree.go:10", "group.go:1", "misc.kt:5"}
    assert all(b.name == "defines_query_name" for f in ranked[:3] for b in f.boosts)
    assert not ranked[3].boosts  # users keep their fused score


def test_file_named_after_the_symbol_wins_among_definitions() -> None:
    p = dataclasses.replace(NONE, definition_boost=3.0)
    ranked = rank(
        fused(hit("other.py", 1, 9, symbol="Logger"), hit("logger.py", 1, 9, symbol="Logger")),
        "Logger",
        [],
        p=p,
    )
    assert paths(ranked)[0] == "logger.py:1"


def test_names_in_a_sentence_count_as_much_but_not_in_a_long_description() -> None:
    p = dataclasses.replace(NONE, definition_boost=3.0)
    whole = rank(fused(hit("a.go", 1, 5), hit("b.go", 1, 5, symbol="HandlerStack")), "HandlerStack", [], p=p)
    inside = rank(
        fused(hit("a.go", 1, 5), hit("b.go", 1, 5, symbol="HandlerStack")),
        "how HandlerStack composes",
        [],
        p=p,
    )

    def factor(ranked: Sequence[FusedHit]) -> float:
        return next(f for f in ranked if f.boosts).boosts[0].factor

    assert factor(whole) == factor(inside) > 1.0
    long = "how does HandlerStack compose every middleware layer into one ordered chain of request handlers"
    described = rank(fused(hit("a.go", 1, 5), hit("b.go", 1, 5, symbol="HandlerStack")), long, [], p=p)
    assert Query.parse(long).is_specific and not any(f.boosts for f in described)


def test_query_words_in_file_name_or_folder() -> None:
    p = dataclasses.replace(NONE, stem_boost=1.0)
    ranked = rank(
        fused(hit("command.go", 1, 9), hit("args.go", 1, 9), hit("bash_completions.go", 1, 9)),
        "bash completion generation",
        [],
        p=p,
    )
    assert paths(ranked)[0] == "bash_completions.go:1"
    ranked = rank(fused(hit("a.go", 1, 9), hit("middleware/recoverer.go", 1, 9)), "panic middleware", [], p=p)
    assert paths(ranked)[0] == "middleware/recoverer.go:1"  # the folder counts too
    # A bare name is not a sentence: no path-word boost.
    ranked = rank(fused(hit("a.go", 1, 9), hit("router.go", 1, 9)), "Router", [], p=p)
    assert not any(b.name == "path_words" for f in ranked for b in f.boosts)


def test_path_penalties_and_the_test_exception() -> None:
    p = signals.SHIPPED
    assert recipe.path_penalty("pkg/foo_test.go", p) == p.test_penalty
    assert recipe.path_penalty("tests/unit/x.py", p) == p.test_penalty
    assert recipe.path_penalty("src/FooTest.java", p) == p.test_penalty
    assert recipe.path_penalty("lib/bats-core/test_functions.bash", p) == 1.0  # the library, not a test
    assert recipe.path_penalty("pkg/__init__.py", p) == p.reexport_penalty
    assert recipe.path_penalty("docs_src/app.py", p) == p.example_penalty
    assert recipe.path_penalty("types/model.d.ts", p) == p.typedef_penalty
    assert recipe.path_penalty("src/router.ts", p) == 1.0
    # Interface declarations apart from their implementation count as type declarations.
    for interface_file in ("Contracts/Container/Container.php", "Queue/Connectors/ConnectorInterface.php"):
        assert recipe.path_penalty(interface_file, p) == p.typedef_penalty, interface_file
    assert recipe.path_penalty("Container/Container.php", p) == 1.0
    assert recipe.path_penalty("Serialization/JsonContract.cs", p) == 1.0  # a class named after contracts
    assert recipe.path_penalty("site/content/user_guide.md", p) == p.docs_penalty
    for build_file in ("Makefile", "tools/GNUmakefile", "docker/Dockerfile", "CMakeLists.txt", "rules.mk"):
        assert recipe.path_penalty(build_file, p) == p.docs_penalty, build_file
    assert recipe.path_penalty("src/makefile_parser.py", p) == 1.0  # code about makefiles is code
    docs = dataclasses.replace(NONE, docs_penalty=0.5)
    ranked = rank(fused(hit("guide.md", 1, 9), hit("mux.go", 1, 9)), "how routing works", [], p=docs)
    assert paths(ranked)[0] == "mux.go:1"
    ranked = rank(fused(hit("guide.md", 1, 9), hit("mux.go", 1, 9)), "routing docs", [], p=docs)
    assert paths(ranked)[0] == "guide.md:1"  # asked for documentation: no penalty
    ranked = rank(fused(hit("Makefile", 1, 9), hit("mux.go", 1, 9)), "Router", [], p=docs)
    assert paths(ranked)[0] == "mux.go:1"  # a Makefile rule `test-router:` is not the name's home
    ranked = rank(fused(hit("Makefile", 1, 9), hit("mux.go", 1, 9)), "makefile test rule", [], p=docs)
    assert paths(ranked)[0] == "Makefile:1"
    only = dataclasses.replace(NONE, test_penalty=0.3)
    ranked = rank(fused(hit("x_test.go", 1, 9), hit("x.go", 1, 9)), "how x works", [], p=only)
    assert paths(ranked)[0] == "x.go:1"
    ranked = rank(fused(hit("x_test.go", 1, 9), hit("x.go", 1, 9)), "how x is tested", [], True, only)
    assert paths(ranked)[0] == "x_test.go:1"


def test_coherence_lifts_a_file_with_several_good_chunks() -> None:
    p = dataclasses.replace(NONE, coherence=0.4)
    ranked = rank(
        fused(hit("lone.go", 1, 9), hit("hot.go", 1, 9), hit("hot.go", 20, 29), hit("hot.go", 40, 49)),
        "q w",
        [],
        p=p,
    )
    assert paths(ranked)[0] == "hot.go:1"


def test_vector_coherence_lifts_the_file_the_vector_leg_returns_again_and_again() -> None:
    # BM25 puts lone.go first; the vector leg's first place is other.go, its next two are both in hot.go.
    keyword = [hit("lone.go", 1, 9), hit("hot.go", 1, 9)]
    vector = [hit("other.go", 1, 9), hit("hot.go", 20, 29), hit("hot.go", 40, 49)]

    def ranking(p: signals.Params, query: str) -> list[FusedHit]:
        cands = fuse([(common_pb2.LEG_KEYWORD, 1.0, keyword), (common_pb2.LEG_VECTOR, 1.0, vector)], 60.0)
        return rank(cands, query, [], p=p)

    def ranked(p: signals.Params, query: str = "how is the hot path kept warm") -> list[str]:
        return [f.hit.location.path for f in ranking(p, query)]

    def voted(p: signals.Params, query: str = "how is the hot path kept warm") -> list[str]:
        boosted = [f for f in ranking(p, query) if any(b.name == "vector_coherence" for b in f.boosts)]
        return sorted(f.hit.location.path for f in boosted)

    on = dataclasses.replace(NONE, vector_coherence=0.6)
    assert ranked(NONE)[0] == "lone.go"
    assert ranked(on)[0] == "hot.go"
    assert voted(on) == ["hot.go", "other.go"]  # each voted file's best chunk, once; lone.go has no vote
    # Only the vector leg's first vector_coherence_depth places vote: at depth 1 hot.go gets nothing.
    shallow = dataclasses.replace(on, vector_coherence_depth=1)
    assert ranked(shallow)[0] == "other.go" and voted(shallow) == ["other.go"]
    # A long description of one function gets no file-level signal, this one included.
    long = "keep the hot path warm by reusing the pooled buffers between two requests of one client"
    assert Query.parse(long).is_specific and voted(signals.SHIPPED, long) == []


def test_saturation_gives_other_files_room() -> None:
    p = dataclasses.replace(NONE, question_saturation_decay=0.5)
    ranked = rank(
        fused(hit("a.go", 1, 9), hit("a.go", 20, 29), hit("a.go", 40, 49), hit("b.go", 1, 9)), "q w", [], p=p
    )
    assert paths(ranked)[:2] == ["a.go:1", "b.go:1"]
    assert [b.name for b in ranked[2].boosts] == ["file_saturation"]


def test_a_question_decays_a_files_further_chunks_more_than_a_name_or_a_long_description() -> None:
    question = "how are retries scheduled"
    name = "RetryPolicy"
    described = (
        "wait a little longer after every failed attempt before the operation is tried once more again"
    )
    assert Query.parse(described).is_specific and not Query.parse(question).is_specific
    assert recipe.saturation_decay(Query.parse(question)) == signals.SHIPPED.question_saturation_decay == 0.5
    assert (
        recipe.saturation_decay(Query.parse(name))
        == recipe.saturation_decay(Query.parse(described))
        == signals.SHIPPED.saturation_decay
    )
    p = dataclasses.replace(NONE, saturation_decay=0.85, question_saturation_decay=0.5)

    def second_chunk_factor(query: str) -> float:
        ranked = rank(fused(hit("a.go", 1, 9), hit("a.go", 20, 29)), query, [], p=p)
        return next(b.factor for b in ranked[1].boosts if b.name == "file_saturation")

    assert second_chunk_factor(question) == 0.5
    assert second_chunk_factor(name) == second_chunk_factor(described) == 0.85


def test_applies_to_meaning_and_name_intents_only() -> None:
    from codesearch.v1 import search_pb2

    assert signals.applies(search_pb2.INTENT_UNDERSTAND_CODE, 0.5)
    assert not signals.applies(search_pb2.INTENT_UNDERSTAND_CODE, 1.0)  # the keyword top hit quotes the query
    assert signals.applies(search_pb2.INTENT_FIND_DEFINITION, 1.0)  # a bare name is always covered
    assert not signals.applies(search_pb2.INTENT_FIND_REFERENCES, 0.0)
    assert not signals.applies(search_pb2.INTENT_EXACT_MATCH, 0.0)


def test_a_qualified_name_is_routed_as_a_name() -> None:
    from codesearch.orchestrator.router import classify
    from codesearch.v1 import search_pb2

    route = classify("Rack::Response")
    assert (route.intent, route.target) == (search_pb2.INTENT_FIND_DEFINITION, "Response")
    assert classify("how does the response get built").intent == search_pb2.INTENT_UNDERSTAND_CODE


def test_a_long_specific_description_gets_no_file_level_signals() -> None:
    # Same candidates, same path words ("cleanup" ~ clean.py): a short question earns coherence and path words,
    # a description of more than query.SPECIFIC_WORDS content words earns neither (the function it names may sit in
    # a file with one good chunk).
    def boosts_for(query: str) -> set[str]:
        cands = fused(hit("clean.py", 1, 9), hit("clean.py", 20, 29), hit("tempfile.py", 1, 9))
        return {b.name for f in rank(cands, query, []) for b in f.boosts}

    short = "how is cleanup done"
    long = "remove a temporary directory tree and everything inside it when the context manager exits cleanup"
    assert not Query.parse(short).is_specific and Query.parse(long).is_specific
    assert {"file_coherence", "path_words"} <= boosts_for(short)
    assert not {"file_coherence", "path_words", "defines_query_name"} & boosts_for(long)
    # Off (0): the long description is ranked like any question.
    assert not Query.parse(long, specific_words=0).is_specific


def test_names_inside_a_long_description_are_not_boosted() -> None:
    cands = fused(hit("a.py", 1, 9), hit("b.py", 1, 9, symbol="TemporaryDirectory"))
    query = "which class makes a TemporaryDirectory that removes itself and every file nested inside it on context exit"
    assert Query.parse(query).is_specific
    assert not any(b.name == "defines_query_name" for f in rank(cands, query, []) for b in f.boosts)


def test_a_query_word_and_a_file_name_match_by_prefix() -> None:
    # 'cleaned' ~ clean.py (one is a prefix of the other, 3+ letters) earns path words; 'temporary' and tempfile.py
    # share only 'temp', which is no match (the rule that matched shared openings lost nothing when deleted).
    p = dataclasses.replace(NONE, stem_boost=1.0)
    ranked = rank(
        fused(hit("tempfile.py", 840, 851), hit("command/clean.py", 12, 31), hit("pool.py", 1, 9)),
        "how are temporary directories cleaned up",
        [],
        p=p,
    )
    assert paths(ranked)[0] == "command/clean.py:12"
    boosted = {f.hit.location.path for f in ranked if any(b.name == "path_words" for b in f.boosts)}
    assert boosted == {"command/clean.py"}


def test_the_repository_name_is_not_a_path_word() -> None:
    p = dataclasses.replace(NONE, stem_boost=1.0)

    def top(params: signals.Params) -> str:
        hits = [hit(name, 1, 9) for name in ("chi.go", "tree.go", "mux.go", "context.go")]
        for h in hits:
            h.location.repository = "chi"
        ranked = rank(fused(*hits), "how does chi route a request through the tree", [], p=params)
        return paths(ranked)[0]

    assert top(p) == "tree.go:1"  # the question names the project, not chi.go
    assert top(dataclasses.replace(p, skip_repository_name=False)) == "chi.go:1"


def test_a_names_reexporting_file_follows_its_definition() -> None:
    """jinja2's StrictUndefined: runtime.py defines it, the package's __init__.py re-exports it; users import it
    from the package, so the barrel comes second, not 19th. A barrel of another package, or one that is not in the
    definition's folder or above, stays where it was; so does a header beside a header definition."""
    definition = common_pb2.Location(repository="r", path="jinja2/runtime.py", start_line=10, end_line=30)
    cands = fused(
        hit("jinja2/runtime.py", 10, 30, snippet="class StrictUndefined(Undefined):"),
        hit("jinja2/sandbox.py", 1, 9),
        hit("jinja2/environment.py", 1, 9),
        hit("jinja2/ext/__init__.py", 1, 9),  # below the definition's folder: not its package's barrel
        hit("jinja2/__init__.py", 1, 9, snippet="from .runtime import StrictUndefined as StrictUndefined"),
    )
    ranked = rank(cands, "StrictUndefined", [definition])
    assert paths(ranked)[:2] == ["jinja2/runtime.py:10", "jinja2/__init__.py:1"]
    assert ranked[1].score >= ranked[2].score * (1 - 1e-9)  # scores still read best first
    assert any(b.name == "follows_definition" for b in ranked[1].boosts)
    off = rank(
        cands, "StrictUndefined", [definition], p=dataclasses.replace(signals.SHIPPED, follow_reexports=False)
    )
    assert paths(off)[1] != "jinja2/__init__.py:1"
    # Another repository's barrel in a folder of the same name is not this package's.
    other = hit("jinja2/__init__.py", 1, 9)
    other.location.repository = "fork"
    elsewhere = fused(
        hit("jinja2/runtime.py", 10, 30, snippet="class StrictUndefined(Undefined):"),
        hit("jinja2/sandbox.py", 1, 9),
        other,
    )
    assert paths(rank(elsewhere, "StrictUndefined", [definition]))[1] != "jinja2/__init__.py:1"
    # A sentence is no bare name: nothing moves.
    assert paths(rank(cands, "how is StrictUndefined raised", [definition]))[1] != "jinja2/__init__.py:1"
    # A C function's header declares it; a header definition's sibling header does not.
    assert (
        second_place(
            "lib/common/entropy.c", "HUF_readStats", "size_t HUF_readStats(void)", "lib/common/huf.h"
        )
        == "huf.h"
    )
    assert (
        second_place("include/path.h", "path_component", "class path_component {", "include/date_time.h")
        == "other.cpp"
    )


def second_place(definition_path: str, name: str, definition_line: str, header: str) -> str:
    """The file name in second place for `name`, among its definition, a source file elsewhere and `header` (in
    that order, by fused score)."""
    where = common_pb2.Location(repository="r", path=definition_path, start_line=1, end_line=9)
    cands = fused(
        hit(definition_path, 1, 9, snippet=definition_line), hit("src/other.cpp", 1, 9), hit(header, 1, 9)
    )
    return PurePosixPath(rank(cands, name, [where])[1].hit.location.path).name
