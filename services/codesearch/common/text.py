"""Words of code and prose, in one place: every regex that cuts text into words, and every stop list.

Each consumer uses the cut its measurements were made with (changing one changes rankings, reranker features or
embeddings), but none keeps its own copy:

- `words`: code tokens (native tokenizer; identifiers whole and split), the keyword leg's snippets and
  `coverage`, the share of a query's words in a hit (the keyword leg's stem fallback, the orchestrator's adaptive
  weights).
- `ascii_words`: lower-case runs of ASCII letters and digits, for prose questions (context packs, expansion).
- `subwords`: identifiers split at case changes, minus QUESTION_STOPWORDS (the reranker's lexical features).
- `split_identifier` / `IDENTIFIER` / CODE_STOPWORDS: the embedding text's identifier words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from codesearch import _native

MIN_WORD_CHARS = 2  # one-letter tokens ("a", "x") match everywhere and say nothing

ASCII_WORD = re.compile(r"[a-z][a-z0-9]*")  # matched on lower-cased text
SUBWORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s")  # a full stop, question or exclamation mark, then white space
CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Words of a question that say nothing about where in a file the answer is (context packs).
PROSE_STOPWORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "from",
        "are",
        "was",
        "not",
        "but",
        "its",
        "has",
        "have",
        "into",
        "when",
        "how",
        "what",
    ]
)
# Words so common in code and questions that matching them says nothing about relevance (the reranker).
QUESTION_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "with",
        "as",
        "at",
        "from",
        "this",
        "that",
        "it",
        "its",
        "if",
        "else",
        "not",
        "no",
        "return",
        "returns",
        "self",
        "cls",
        "none",
        "true",
        "false",
        "def",
        "class",
        "import",
        "use",
        "used",
        "using",
        "which",
        "when",
        "what",
        "where",
        "how",
        "do",
        "does",
    ]
)
# Words every chunk has: they say nothing about what it does (the embedding text).
CODE_STOPWORDS = frozenset(
    [
        "self",
        "cls",
        "def",
        "class",
        "return",
        "if",
        "else",
        "elif",
        "for",
        "while",
        "in",
        "not",
        "and",
        "or",
        "is",
        "none",
        "true",
        "false",
        "import",
        "from",
        "as",
        "with",
        "try",
        "except",
        "finally",
        "raise",
        "pass",
        "break",
        "continue",
        "lambda",
        "yield",
        "async",
        "await",
        "the",
        "a",
        "an",
        "of",
        "to",
        "int",
        "str",
        "bool",
        "float",
        "list",
        "dict",
        "set",
        "tuple",
        "bytes",
        "object",
        "var",
        "let",
        "const",
        "func",
        "fn",
        "pub",
        "new",
        "this",
        "null",
        "nil",
        "void",
        "static",
        "public",
        "private",
        "protected",
    ]  # noqa: SIM905
)


def words(text: str) -> set[str]:
    """Lower-cased code tokens (identifiers whole and split into parts) of at least two characters."""
    return {t.lower() for t in _native.code_tokens(text) if len(t) >= MIN_WORD_CHARS}


def coverage(query_words: set[str], text: str, cut: Callable[[str], set[str]] | None = None) -> float:
    """Share of the query's words found among `text`'s, both cut alike (`words` unless `cut` says otherwise; 0.0
    for a query without words)."""
    if not query_words:
        return 0.0
    return len(query_words & (cut or words)(text)) / len(query_words)


def ascii_words(text: str) -> list[str]:
    """Lower-case runs of ASCII letters and digits that start with a letter, in order."""
    return ASCII_WORD.findall(text.lower())


def subwords(text: str) -> list[str]:
    """Lower-case sub-words of identifiers and prose (snake_case and camelCase split), minus stopwords, in order."""
    return [w for w in (m.lower() for m in SUBWORD.findall(text)) if w not in QUESTION_STOPWORDS]


def split_identifier(name: str) -> list[str]:
    """'parseHTTPResponse_v2' -> ['parse', 'http', 'response', 'v2'-ish]: lower-case words."""
    parts: list[str] = []
    for part in name.split("_"):
        parts += [w.lower() for w in CAMEL_PART.findall(part)]
    return [w for w in parts if w]


def first_sentence(doc: str) -> str:
    """A docstring's first sentence: its first paragraph, white space folded, cut after the first . ! or ?."""
    para = " ".join(doc.strip().split("\n\n", 1)[0].split())
    return SENTENCE_END.split(para, maxsplit=1)[0].strip()
