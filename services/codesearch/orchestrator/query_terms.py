"""What a query names: a bare symbol ("RouterGroup", "Sinatra::Base"), or identifiers inside a sentence
("how does HandlerStack compose middleware"), and the plain words that may name a file or a folder."""

from __future__ import annotations

import re

# A whole query that is one identifier, possibly namespace-qualified. Plain lower-case words ("session") are
# prose, not symbols, unless they hold an underscore or a capital.
SYMBOL_QUERY = re.compile(
    r"^(?:"
    r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\\|->|\.)[A-Za-z_][A-Za-z0-9_]*)+"
    r"|_[A-Za-z0-9_]*"
    r"|[A-Za-z][A-Za-z0-9]*[A-Z_][A-Za-z0-9_]*"
    r"|[A-Z][A-Za-z0-9]*"
    r")$"
)
# Identifiers inside a sentence: PascalCase with two humps, camelCase, snake_case (not plain words or acronyms).
EMBEDDED_SYMBOL = re.compile(
    r"\b(?:[A-Z][a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*|[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b"
)
NAMESPACE_SEPARATORS = ("::", "\\", "->", ".")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "is",
        "it",
        "not",
        "of",
        "on",
        "or",
        "the",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
    ]
)
MIN_WORD = 3  # words of one or two letters name no file


def is_symbol_query(query: str) -> bool:
    return SYMBOL_QUERY.match(query.strip()) is not None


def last_segment(name: str) -> str:
    """'Sinatra::Base' -> 'Base', 'Client' -> 'Client'."""
    for sep in NAMESPACE_SEPARATORS:
        if sep in name:
            return name.rsplit(sep, 1)[-1]
    return name


def query_names(query: str) -> list[str]:
    """Names the query asks about: the symbol itself (and its last segment), or the identifiers in a sentence."""
    text = query.strip()
    if is_symbol_query(text):
        tail = last_segment(text)
        return [text] if tail == text else [tail, text]
    return list(dict.fromkeys(EMBEDDED_SYMBOL.findall(text)))


def split_identifier(token: str) -> list[str]:
    """'HandlerStack' -> ['handlerstack', 'handler', 'stack']; 'my_func' -> ['my_func', 'my', 'func']."""
    lower = token.lower()
    parts = (
        [p for p in lower.split("_") if p] if "_" in token else [m.lower() for m in CAMEL_PART.findall(token)]
    )
    return [lower, *parts] if len(parts) >= 2 else [lower]


def content_words(query: str) -> set[str]:
    """The query's lower-cased words that could name a file or folder (stop words and short words dropped)."""
    return {w.lower() for w in WORD.findall(query) if len(w) >= MIN_WORD and w.lower() not in STOPWORDS}
