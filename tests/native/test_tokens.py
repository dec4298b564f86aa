"""Code-aware tokens: whole identifiers plus their camel/snake/digit parts."""

from __future__ import annotations

import pytest
from codesearch._native import code_tokens, code_tokens_joined

from tests.native.gil_probe import assert_releases_gil


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("parseHTTPResponse", ["parsehttpresponse", "parse", "http", "response"]),
        ("XMLHttpRequest2", ["xmlhttprequest2", "xml", "http", "request", "2"]),
        ("max_retry_count", ["max_retry_count", "max", "retry", "count"]),
        ("__init__", ["__init__", "init"]),
        ("getX", ["getx", "get"]),
        ("sha256sum", ["sha256sum", "sha", "256", "sum"]),
        ("x = 0x1F + 42", ["x", "0x1f", "42"]),
        ("naïveÉtat", ["naïveétat"]),
        ("a.b(c) -> None", ["a", "b", "c", "none"]),
        ("", []),
    ],
)
def test_code_tokens(text: str, tokens: list[str]) -> None:
    assert code_tokens(text) == tokens


def test_joined_matches_code_tokens() -> None:
    texts = ["def parseHTTPResponse(self):", "", "class XMLHttpRequest2: pass", "naïve_var = 1"]
    assert code_tokens_joined(texts) == [" ".join(code_tokens(t)) for t in texts]


def test_joined_releases_the_gil() -> None:
    texts = ["def parseHTTPResponse(self, maxRetryCount=3): return self.get_cache()\n" * 40] * 1500
    assert_releases_gil(lambda: code_tokens_joined(texts))
