"""The text the embedding model reads for one chunk.

The model sees only ~256 word pieces (~20 lines of code), so what comes first decides what the vector means: path
words and breadcrumb/symbol, signature, docstring/leading comment, identifier words (camelCase/snake_case split),
then the body with blank lines and indentation squeezed, truncated.
The raw and header variants tied within noise (MRR@10 raw 0.434, header 0.433, structured 0.429 on 40
semantic-dev queries) and were deleted; see services/RESULTS.md.
"""

from __future__ import annotations

import functools
import re

from codesearch.common.text import CODE_STOPWORDS, IDENTIFIER, split_identifier

MAX_DOC_CHARS = 2000  # ~2-3x what 256 word pieces cover: the tokenizer truncates the rest anyway
MAX_IDENT_WORDS = 40  # enough to name what the body touches without crowding out the body itself
MAX_DOC_LINES = 6  # the first lines of a docstring carry its summary; the rest is parameters and examples
# Identifiers repeat across a repository's chunks (the standard library: 752,168 splits for 18,823 chunks), and a
# file's chunks share their path: both are split once. Sizes bound the memory, not the hit rate.
IDENT_CACHE_SIZE = 1 << 16
PATH_CACHE_SIZE = 1 << 12

_SIGNATURE = re.compile(
    r"^\s*(?:@|async\s+def\b|def\b|class\b|func\b|fn\b|pub\b|function\b|interface\b|struct\b|impl\b|type\b|"
    r"public\b|private\b|protected\b|static\b|export\b|module\b|trait\b|enum\b)"
)
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;)")


@functools.lru_cache(maxsize=PATH_CACHE_SIZE)
def path_words(path: str) -> str:
    """'logging/config.py' -> 'logging config'."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    words: list[str] = []
    for part in re.split(r"[/\\.\-]+", stem):
        words += split_identifier(part)
    return " ".join(w for w in words if w not in ("init", "py"))


def _header(path: str, breadcrumb: list[str], symbol: str) -> str:
    parts = [path_words(path)]
    crumbs = [c for c in breadcrumb if c]
    if symbol and (not crumbs or crumbs[-1] != symbol):
        crumbs.append(symbol)
    if crumbs:
        parts.append(" ".join(_crumb_words(c) for c in crumbs))
    return " | ".join(p for p in parts if p)


@functools.lru_cache(maxsize=IDENT_CACHE_SIZE)
def _crumb_words(crumb: str) -> str:
    """'HTTPServer' -> 'http server'; a crumb with no word stays as it is."""
    return " ".join(split_identifier(crumb)) or crumb


def _split_signature_doc(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(signature lines, docstring/comment lines, body lines) of a chunk, best effort across languages."""
    i = 0
    lead_comments: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _COMMENT.match(lines[i])):
        if lines[i].strip():
            lead_comments.append(lines[i].strip().lstrip("#/*-; ").strip())
        i += 1
    sig: list[str] = []
    if i < len(lines) and _SIGNATURE.match(lines[i]):
        while i < len(lines) and len(sig) < 8:
            sig.append(lines[i].strip())
            i += 1
            if sig[-1].endswith((":", "{", ";", ")")) and not sig[-1].startswith("@"):
                break
    doc: list[str] = list(lead_comments)
    if i < len(lines) and lines[i].strip()[:3] in ('"""', "'''", 'r"""', "r'''"):
        quote = '"""' if '"""' in lines[i] else "'''"
        first = lines[i].strip().lstrip("r")[3:]
        if quote in first:
            doc.append(first.split(quote)[0])
            i += 1
        else:
            doc.append(first)
            i += 1
            while i < len(lines) and quote not in lines[i]:
                doc.append(lines[i].strip())
                i += 1
            if i < len(lines):
                doc.append(lines[i].split(quote)[0].strip())
                i += 1
    while i < len(lines) and _COMMENT.match(lines[i]) and len(doc) < MAX_DOC_LINES:
        doc.append(lines[i].strip().lstrip("#/*-; ").strip())
        i += 1
    doc = [d for d in doc if d][:MAX_DOC_LINES]
    return sig, doc, lines[i:]


@functools.lru_cache(maxsize=IDENT_CACHE_SIZE)
def _words_of_identifier(ident: str) -> tuple[str, ...]:
    return tuple(w for w in split_identifier(ident) if len(w) > 1 and w not in CODE_STOPWORDS)


def _ident_words(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for ident in dict.fromkeys(IDENTIFIER.findall(text)):  # a repeated identifier adds no word
        for w in _words_of_identifier(ident):
            if w not in seen:
                seen[w] = None
                if len(seen) >= MAX_IDENT_WORDS:
                    return list(seen)
    return list(seen)


def doc_text(path: str, text: str, breadcrumb: list[str] | None = None, symbol: str = "") -> str:
    """The string to embed for one chunk."""
    header = _header(path, list(breadcrumb or []), symbol)
    sig, doc, body = _split_signature_doc(text.splitlines())
    words = _ident_words("\n".join(sig + body))  # code names only: the docstring is already in
    squeezed = [ln.strip() for ln in body if ln.strip()]
    parts = [header]
    if sig:
        parts.append(" ".join(sig))
    if doc:
        parts.append(" ".join(doc))
    if words:
        parts.append(" ".join(words))
    parts.append("\n".join(squeezed))
    return "\n".join(parts)[:MAX_DOC_CHARS]
