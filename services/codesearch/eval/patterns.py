"""How the harness turns a query into a pattern for the literal and regex modes and for ripgrep.

Forced literal/regex modes and ripgrep need a string to look for, not a question. The harness reads the query
text only (never its class or gold), the way a person translating the question for grep would:
  - a query wholly in quotes ("...", '...' or `...`) -> the text inside the quotes;
  - a templated question about one identifier ("where is X defined", "who calls X", "usages of X",
    "callers of X", "what depends on [module] M", "what breaks if I change [module] M") -> X or M;
  - anything else -> the query as typed (a bare identifier stays itself).
Regex mode searches re.escape(pattern), so both modes look for the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUOTE_RE = re.compile(r"""^\s*(["'`])(?P<body>.+)\1\s*$""", re.S)
SUBJECT_TEMPLATES = tuple(
    re.compile(p, re.I)
    for p in (
        r"^\s*where\s+is\s+(?P<s>\S+)\s+defined\s*\??\s*$",
        r"^\s*(?:who\s+calls|usages\s+of|callers\s+of|uses\s+of|references\s+to)\s+(?P<s>\S+?)\s*\??\s*$",
        r"^\s*what\s+depends\s+on\s+(?:module\s+)?(?P<s>\S+?)\s*\??\s*$",
        r"^\s*what\s+breaks\s+if\s+i\s+change\s+(?:module\s+)?(?P<s>\S+?)\s*\??\s*$",
    )
)
IDENTIFIER_RE = re.compile(r"^[A-Za-z_][\w.]*$")
WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_WORD_CHARS = 3  # shorter words ("a", "of", "is") match nearly every line
# Words a person would not bother to grep for: they match everywhere.
_STOPWORDS_TEXT = (
    "the and for are but not you all any can had her was one our out has how its may new now see who did "
    "get let put say she too use this that with from into than then them they when what will your been "
    "have each were which their there these those would about other some such only also more most"
)
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True)
class Pattern:
    """What to look for: `kind` is 'quoted', 'subject', 'identifier' or 'text'."""

    kind: str
    text: str


def derive(query: str) -> Pattern:
    m = QUOTE_RE.match(query)
    if m:
        return Pattern("quoted", m.group("body"))
    for t in SUBJECT_TEMPLATES:
        m = t.match(query)
        if m and IDENTIFIER_RE.match(m.group("s")):
            return Pattern("subject", m.group("s"))
    q = query.strip()
    if IDENTIFIER_RE.match(q):
        return Pattern("identifier", q)
    return Pattern("text", q)


def literal_pattern(query: str) -> str:
    return derive(query).text


def regex_pattern(query: str) -> str:
    return re.escape(derive(query).text)


def query_words(query: str) -> list[str]:
    """Distinct words worth grepping for, lower-cased, in query order."""
    seen: dict[str, None] = {}
    for w in WORD_RE.findall(query):
        lw = w.lower()
        if len(lw) >= MIN_WORD_CHARS and lw not in STOPWORDS:
            seen.setdefault(lw, None)
    return list(seen)
