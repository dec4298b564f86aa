"""What the embedding model reads for a chunk (no model needed)."""

from __future__ import annotations

from codesearch.common.doc_text import MAX_DOC_CHARS, doc_text, path_words, split_identifier

METHOD = '''@retry_on(IOError)
def fetchRemoteConfig(self, url, timeout=5):
    """Download the JSON settings document and decode it.

    Longer explanation that matters less.
    """
    response = self.http_client.get(url, timeout=timeout)
    return json.loads(response.body)
'''


def test_split_identifier() -> None:
    assert split_identifier("fetchRemoteConfig") == ["fetch", "remote", "config"]
    assert split_identifier("parse_HTTPResponse") == ["parse", "http", "response"]
    assert split_identifier("MAX_RETRIES") == ["max", "retries"]


def test_path_words() -> None:
    assert path_words("logging/config.py") == "logging config"
    assert path_words("src/net/httpClient.ts") == "src net http client"
    assert path_words("email/__init__.py") == "email"


def test_structured_puts_header_signature_and_docstring_first() -> None:
    text = doc_text(
        "settings/remote_loader.py", METHOD, ["ConfigStore", "fetchRemoteConfig"], "fetchRemoteConfig"
    )
    lines = text.splitlines()
    assert lines[0] == "settings remote loader | config store fetch remote config"
    assert lines[1].startswith("@retry_on(IOError) def fetchRemoteConfig(self, url, timeout=5):")
    assert lines[2].startswith("Download the JSON settings document and decode it.")
    # identifier words of the code, split, without keywords; docstring words are not repeated
    assert "http client" in lines[3] and "self" not in lines[3].split() and "download" not in lines[3]
    assert lines[-1] == "return json.loads(response.body)"


def test_truncation() -> None:
    long = "x = 1\n" * 5000
    assert len(doc_text("a.py", long)) == MAX_DOC_CHARS


def test_other_languages_keep_leading_comments() -> None:
    go = "// Haversine returns the great-circle distance.\nfunc Haversine(a, b float64) float64 {\n\treturn a\n}"
    lines = doc_text("geo/distance.go", go, [], "Haversine").splitlines()
    assert lines[0] == "geo distance | haversine"
    assert lines[1] == "func Haversine(a, b float64) float64 {"
    assert lines[2] == "Haversine returns the great-circle distance."
