"""Comment rules per language and the cleaning of a description.

A doc comment is the run of comment lines that ends on the line just above a definition (annotation and
attribute lines in between belong to the definition); a file header is the first comment block of a file that
is not a licence. `clean` turns a comment's text into a description (first paragraph, bounded, markup folded) and
returns "" for one that is trivial: too short, a TODO, a licence, generated-code boilerplate, a parameter list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_DESC_CHARS = 16  # "Returns x." and shorter say nothing a name does not
MIN_DESC_WORDS = 3  # two words ("Constructor.", "Helper method") describe no behaviour
MAX_DESC_CHARS = 600  # a first paragraph rarely runs longer; past it the text is usually a manual page
MAX_CODE_LIKE = 0.12  # share of `{}();=<>[]` characters past which a "comment" is commented-out code
HEADER_BLOCKS = (
    3  # comment blocks read at a file's top: a licence, then maybe a shebang note, then the header
)


@dataclass(frozen=True)
class Syntax:
    line: tuple[str, ...]  # line-comment markers, longest first
    block: tuple[tuple[str, str], ...]  # (open, close), doc forms first


C_LIKE = Syntax(("///", "//!", "//"), (("/**", "*/"), ("/*!", "*/"), ("/*", "*/")))
HASH = Syntax(("##", "#"), ())
SYNTAX: dict[str, Syntax] = {
    **{
        lang: C_LIKE
        for lang in (
            "c",
            "cpp",
            "objc",
            "java",
            "javascript",
            "typescript",
            "tsx",
            "go",
            "rust",
            "kotlin",
            "scala",
            "csharp",
            "swift",
            "dart",
            "groovy",
            "zig",
            "protobuf",
        )
    },  # fmt: skip
    "php": Syntax(("///", "//", "#"), (("/**", "*/"), ("/*", "*/"))),
    "ruby": HASH,
    "perl": HASH,
    "bash": HASH,
    "python": HASH,
    "r": Syntax(("#'", "#"), ()),
    "elixir": HASH,
    "julia": HASH,
    "lua": Syntax(("---", "--"), (("--[[", "]]"),)),
    "haskell": Syntax(("-- |", "--"), (("{-|", "-}"), ("{-", "-}"))),
    "sql": Syntax(("--",), (("/*", "*/"),)),
    "clojure": Syntax((";;;", ";;", ";"), ()),
    "erlang": Syntax(("%%%", "%%", "%"), ()),
    "ocaml": Syntax((), (("(**", "*)"), ("(*", "*)"))),
}

ANNOTATION_LINE = re.compile(r"^\s*(@[\w.]+|#\[|#!\[|\[[A-Z]\w*)")  # @Override, #[inline], [Flags]
LICENCE = re.compile(
    r"copyright|licen[cs]ed? under|spdx-license|permission is hereby granted|gnu (lesser |library )?general "
    r"public|all rights reserved|apache license|mit license|mozilla public|without warranty|redistribution and use",
    re.IGNORECASE,
)
GENERATED = re.compile(
    r"auto-?generated|generated (by|from|with|using)|do not edit|code generated|this file (is|was) generated|"
    r"@generated|automatically generated",
    re.IGNORECASE,
)
TRIVIAL_START = re.compile(
    r"^(todo|fixme|xxx|hack|note to self|nolint|noqa|type:\s*ignore|eslint|tslint|prettier|istanbul|pylint|"
    r"jshint|jscs|global |@ts-|@flow|@jsx|@format|@license|@preserve|@internal\b|@private\b|@hidden\b|"
    r"\{@inheritdoc\}|@inheritdoc|inheritdoc|see\s+\S+\s*$|deprecated\.?\s*$|-\*-|vim?:|emacs:|coding[:=]|"
    r"fmt:\s|region\b|endregion\b|mark:|pragma\b|\$id|\$header|\+build|go:build|cython:)",
    re.IGNORECASE,
)
# Lines where a doc comment's prose ends and its parameter list or sections begin.
SECTION = re.compile(
    r"^\s*(@\w+|:(param|type|return|returns|rtype|raises|arg|ivar|cvar|var)\b|\\(param|return|brief)\b|"
    r"(args|arguments|parameters|params|returns?|yields?|raises|throws|examples?|example usage|usage|notes?|"
    r"see also|attributes|keyword arguments|other parameters|safety|panics|errors|warnings?|todo)\s*:?\s*$|"
    r"#+\s+\w|[-=~^]{3,}\s*$|>>>|```|\.\. )",
    re.IGNORECASE,
)
JAVADOC_INLINE = re.compile(r"\{@(?:link|linkplain|code|literal|value)\s+([^}]*)\}")
HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(\s[^<>]*)?/?>")
DOXYGEN_BRIEF = re.compile(r"^[@\\]brief\s+")
CODE_CHARS = set("{}();=<>[]")


def _strip_line_marker(line: str, markers: tuple[str, ...]) -> str | None:
    """The text of a line comment (marker and one space removed), or None when the line is no such comment."""
    s = line.strip()
    for m in markers:
        if s.startswith(m):
            return s[len(m) :].lstrip("/#!-;%*").removeprefix(" ")
    return None


def _block_text(body: str) -> str:
    """A block comment's inner text with each line's leading `*` (Javadoc's margin) removed."""
    out = []
    for line in body.split("\n"):
        s = line.strip()
        if s.startswith("*"):
            s = s[1:].removeprefix(" ")
        out.append(s)
    return "\n".join(out)


def _block_at(lines: list[str], first: int, last: int, syntax: Syntax, close: str) -> str:
    """The inner text of the block comment that opens on line `first` and closes at the end of line `last`."""
    body = "\n".join(lines[first : last + 1]).strip()
    for open_ in sorted((o for o, c in syntax.block if c == close), key=len, reverse=True):
        if body.startswith(open_):
            body = body[len(open_) :]
            break
    return _block_text(body[: body.rfind(close)] if close in body else body)


def comment_above(lines: list[str], start: int, language: str) -> tuple[int, int, str] | None:
    """The comment ending just above line index `start` (0-based): (first, last line index, raw text), or None.

    Annotation/attribute lines between the comment and the definition are skipped (they stay with the code).
    A blank line between comment and definition means the comment is not the definition's. Python documents
    with docstrings (`#` lines above a def are notes), so it has none.
    """
    syntax = SYNTAX.get(language)
    if syntax is None or language == "python":
        return None
    i = start - 1
    while i >= 0 and ANNOTATION_LINE.match(lines[i]) and not _is_comment_line(lines[i], syntax):
        i -= 1
    if i < 0 or not lines[i].strip():
        return None
    last = i
    s = lines[i].rstrip()
    if _strip_line_marker(s, syntax.line) is None:
        for close in dict.fromkeys(c for _, c in syntax.block):
            if not s.endswith(close):
                continue
            base = min((o for o, c in syntax.block if c == close), key=len)
            j = i
            while j >= 0 and base not in (lines[j][: -len(close)] if j == i else lines[j]):
                j -= 1
            if j < 0 or lines[j][: lines[j].index(base)].strip():
                return None  # no opening, or code before it: a trailing comment of that code
            return j, last, _block_at(lines, j, i, syntax, close)
        return None
    texts: list[str] = []
    while i >= 0 and not (i == 0 and lines[0].startswith("#!")):  # a shebang is no comment
        t = _strip_line_marker(lines[i], syntax.line)
        if t is None:
            break
        texts.append(t)
        i -= 1
    return i + 1, last, "\n".join(reversed(texts))


def _is_comment_line(line: str, syntax: Syntax) -> bool:
    s = line.strip()
    return any(s.startswith(m) for m in syntax.line) or any(s.startswith(o) for o, _ in syntax.block)


def header_comments(lines: list[str], language: str) -> list[tuple[int, int, str]]:
    """The comment blocks at the top of a file (before any code), at most HEADER_BLOCKS: (first, last, text)."""
    syntax = SYNTAX.get(language)
    if syntax is None:
        return []
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(lines)
    if n and lines[0].startswith("#!"):
        i = 1
    while i < n and len(out) < HEADER_BLOCKS:
        s = lines[i].strip()
        if not s or (language == "php" and s.startswith("<?php")) or s in ("'use strict';", '"use strict";'):
            i += 1
            continue
        opened = next(((o, c) for o, c in syntax.block if s.startswith(o)), None)
        if opened is not None:
            j = i
            while j < n and opened[1] not in (s[len(opened[0]) :] if j == i else lines[j]):
                j += 1
            if j >= n:
                break
            out.append((i, j, _block_at(lines, i, j, syntax, opened[1])))
            i = j + 1
            continue
        if _strip_line_marker(s, syntax.line) is not None:
            j = i
            texts = []
            while j < n and (t := _strip_line_marker(lines[j], syntax.line)) is not None:
                texts.append(t)
                j += 1
            out.append((i, j - 1, "\n".join(texts)))
            i = j
            continue
        break
    return out


def _first_paragraph(text: str) -> str:
    kept: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            if kept:
                break
            continue
        if SECTION.match(line) and not DOXYGEN_BRIEF.match(line):
            break
        kept.append(DOXYGEN_BRIEF.sub("", line))
    return " ".join(kept)


def _bounded(text: str) -> str:
    if len(text) <= MAX_DESC_CHARS:
        return text
    cut = text[:MAX_DESC_CHARS]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    return cut[: end + 1] if end > MIN_DESC_CHARS else cut.rsplit(" ", 1)[0]


def clean(text: str) -> str:
    """The description a comment or docstring gives, or "" when it is trivial (see the module's doc)."""
    if not text or GENERATED.search(text[:400]) or LICENCE.search(text[:400]):
        return ""
    para = _first_paragraph(text)
    para = JAVADOC_INLINE.sub(lambda m: m.group(1).strip(), para)
    para = HTML_TAG.sub("", para)
    para = re.sub(r"\s+", " ", para).strip()
    para = _bounded(para)
    if len(para) < MIN_DESC_CHARS or len(para.split()) < MIN_DESC_WORDS or TRIVIAL_START.match(para):
        return ""
    if sum(ch in CODE_CHARS for ch in para) > MAX_CODE_LIKE * len(para):
        return ""
    if sum(ch.isalpha() for ch in para) < len(para) / 2:
        return ""  # a rule (=====), a table or a path list, not prose
    return para
