"""Doc comments of definitions in any language the shared parser reads: the comment block written right above a
definition ("// Use appends a middleware ...", "/** Returns ... */", "-- | ...", "## ...", Elixir's @doc).

The trainer mines Python docstrings with `ast`; every other language documents a definition with a comment
block above it, so this gives the reranker a sentence -> definition pair there too. Only a block that touches
the definition counts (a blank line ends it): licence headers and section banners sit apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codesearch.common.parsing import extract

# Comment openers by how the line starts. `#` is a comment only where the language says so (in C it is the
# preprocessor, in Rust an attribute).
SLASH_COMMENT = re.compile(r"^\s*(?:///?!?|/\*\*?|\*/|\*)")
HASH_COMMENT = re.compile(r"^\s*#+(?![\[!])")
DASH_COMMENT = re.compile(r"^\s*--+\s*[|^]?")
HASH_LANGUAGES = frozenset(
    {"bash", "ruby", "elixir", "perl", "r", "julia", "make", "yaml", "hcl", "dockerfile"}
)
DASH_LANGUAGES = frozenset({"lua", "haskell", "sql"})
# Lines between a doc comment and its definition that do not end the block: attributes, annotations, decorators.
ATTRIBUTE_LINE = re.compile(r"^\s*(?:@\w|#\[|\[\w)")
ELIXIR_DOC_OPEN = re.compile(r'^\s*@(?:doc|moduledoc|typedoc)\s+(?:~[sS])?"""\s*$')
TAG_LINE = re.compile(r"^\s*[@\\](?:param|return|throws|see|since|brief|tparam|note|example)\b")
# Kinds with a body worth reading; fields and variables are one line and say little.
DOCUMENTED_KINDS = frozenset(
    {"function", "method", "class", "struct", "interface", "trait", "enum", "module", "type", "macro", "impl"}
)
# Markup inside doc comments, replaced by the name it refers to: C#'s <see cref="X"/>, Javadoc's {@link X}; other
# documentation tags (<summary>, <param ...>) are dropped; other angle brackets are code (Option<T>).
REFERENCE_MARKUP = re.compile(r'<see\w*\s+\w+="([^"]*)"\s*/>|\{@\w+\s+([^}]*)\}')
XML_TAG = re.compile(
    r"</?(?:summary|remarks|param|typeparam|returns|value|para|c|code|exception|example|see|seealso|inheritdoc"
    r"|list|item|description|term|paramref|typeparamref|p|br|b|i|em|strong|pre|ul|li)\b[^>]*>"
)
MAX_COMMENT_LINES = 60  # a longer block above a definition is a file banner or commented-out code


@dataclass(frozen=True)
class DocumentedDefinition:
    name: str
    crumbs: tuple[str, ...]  # enclosing definitions, outermost first
    doc: str  # the comment's text, markers removed
    comment: tuple[str, ...]  # the comment lines as written
    code: tuple[str, ...]  # the definition's lines, without the comment (and its attribute lines)


def _comment_text(line: str, language: str) -> str | None:
    """The text of a comment line (markers removed), or None when the line is not a comment."""
    for pattern, applies in (
        (SLASH_COMMENT, language not in HASH_LANGUAGES | DASH_LANGUAGES or language == "php"),
        (HASH_COMMENT, language in HASH_LANGUAGES or language == "php"),
        (DASH_COMMENT, language in DASH_LANGUAGES),
    ):
        if applies:
            m = pattern.match(line)
            if m:
                return line[m.end() :].removesuffix("*/").strip()
    return None


def _elixir_doc(lines: list[str], end: int) -> tuple[int, list[str]] | None:
    """(first line, text lines) of an Elixir @doc heredoc closing on line `end` (0-based), or None."""
    if lines[end].strip() != '"""':
        return None
    for i in range(end - 1, max(-1, end - MAX_COMMENT_LINES), -1):
        if ELIXIR_DOC_OPEN.match(lines[i]):
            return i, [ln.strip() for ln in lines[i + 1 : end]]
    return None


def leading_comment(lines: list[str], start: int, language: str) -> tuple[int, str] | None:
    """(first line of the block, its text) for the doc comment right above 0-based line `start`, or None."""
    i = start - 1
    while i >= 0 and ATTRIBUTE_LINE.match(lines[i]) and not ELIXIR_DOC_OPEN.match(lines[i]):
        i -= 1
    if i < 0:
        return None
    if language == "elixir":
        found = _elixir_doc(lines, i)
        if found is not None:
            return found[0], "\n".join(found[1])
    texts: list[str] = []
    while i >= 0 and len(texts) < MAX_COMMENT_LINES:
        text = _comment_text(lines[i], language)
        if text is None:
            break
        texts.append(text)
        i -= 1
    if not texts or len(texts) >= MAX_COMMENT_LINES:
        return None
    texts.reverse()
    kept = [t for t in texts if not TAG_LINE.match(t)]
    return i + 1, plain_text("\n".join(kept))


def plain_text(doc: str) -> str:
    """A doc comment's words without its markup."""
    doc = REFERENCE_MARKUP.sub(lambda m: m.group(1) or m.group(2), doc.replace("/**", ""))
    return XML_TAG.sub("", doc).strip()


def documented_definitions(path: str, language: str, source: str) -> list[DocumentedDefinition]:
    """The definitions of one file that have a doc comment right above them."""
    extraction = extract(path, language, source.encode("utf-8"))
    if extraction is None:
        return []
    lines = source.splitlines()
    out: list[DocumentedDefinition] = []
    for d in extraction.definitions:
        if d.kind not in DOCUMENTED_KINDS or not 1 <= d.start_line <= len(lines):
            continue
        found = leading_comment(lines, d.start_line - 1, language)
        if found is None or not found[1]:
            continue
        first, doc = found
        crumbs = tuple(p for p in re.split(r"\.|::|#|/", d.parent) if p)
        comment = tuple(lines[first : d.start_line - 1])
        code = tuple(lines[d.start_line - 1 : d.end_line])
        out.append(DocumentedDefinition(d.name, crumbs, doc, comment, code))
    return out
