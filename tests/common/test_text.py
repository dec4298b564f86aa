"""One home for the ways text is cut into words; each cut keeps the behaviour its consumer was measured with."""

from __future__ import annotations

from codesearch.common import text


def test_code_tokens_keep_identifiers_whole_and_split() -> None:
    assert {"parse_header", "parse", "header", "line"} <= text.words("def parse_header(line): x")
    assert "x" not in text.words("def parse_header(line): x")  # one letter says nothing


def test_ascii_words_lower_case_prose() -> None:
    assert text.ascii_words("How does HTTPServer retry 3 times?") == [
        "how",
        "does",
        "httpserver",
        "retry",
        "times",
    ]


def test_subwords_split_identifiers_and_drop_question_stopwords() -> None:
    assert text.subwords("how is the parseHTTPResponse_v2 done") == ["parse", "http", "response", "2", "done"]
    assert "the" in text.QUESTION_STOPWORDS and "the" in text.PROSE_STOPWORDS


def test_split_identifier_for_the_embedding_text() -> None:
    assert text.split_identifier("fetchRemoteConfig") == ["fetch", "remote", "config"]
    assert text.split_identifier("parse_HTTPResponse") == ["parse", "http", "response"]
    assert "self" in text.CODE_STOPWORDS


def test_first_sentence_is_the_first_paragraphs_first_sentence_with_white_space_folded() -> None:
    from codesearch.common.text import first_sentence

    assert first_sentence("  Return the  value.\n  More here.\n\nSecond paragraph.") == "Return the value."
    assert first_sentence("Is it done? Yes.") == "Is it done?"
    assert first_sentence("no full stop at all\n\nnext") == "no full stop at all"
    assert first_sentence("v1.2 is out. Then") == "v1.2 is out."  # a dot inside a word ends nothing
