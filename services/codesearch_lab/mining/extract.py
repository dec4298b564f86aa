"""(description, code) pairs of one file, and of a README's sections.

- `docstring`: a Python function's or class's docstring (ast) and its definition, the docstring lines removed.
- `doc_comment`: the comment just above a definition (tree-sitter definitions from the product's parser, see
  codesearch.common.parsing) and the definition, which never contains that comment; in C-family headers also a
  doc comment (`/**`, `///`) and the prototype or declaration it sits on.
- `file_header`: a module docstring or a file's first comment that is not a licence, and the file without it
  (truncated).
- `readme_section`: a README section's heading and first paragraph, and the first source file it names.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from codesearch_lab.mining import comments

MAX_DEF_LINES = 150  # a definition's code is cut after this many lines (a class's first methods say enough)
MAX_FILE_LINES = 120  # a file header's or README section's code: the file's first lines
MAX_CODE_CHARS = 8000  # any code side is cut here too (long lines: tables, embedded data)
MIN_CODE_TOKENS = 6  # `def f(): pass` and bare prototypes without parameters carry no behaviour
MAX_DECL_LINES = 8  # a C prototype the doc comment sits on ends within this many lines
MAX_README_PAIRS = (
    30  # one README's sections: past this it is a manual, and its pairs would dominate a package
)
WORD = re.compile(r"\w+")
C_FAMILY = frozenset({"c", "cpp", "objc"})
DOC_OPENERS = ("/**", "///", "/*!", "//!")  # what marks a C-family comment as documentation, not a note
MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
PATH_MENTION = re.compile(r"[\w./-]+\.[A-Za-z]{1,6}\b")
POD_START = re.compile(r"^=(pod|head\d|item|over|begin|for|encoding)\b")
POD_ITEM = re.compile(r"^=(head[1-4]|item)\s+(.+?)\s*$")
POD_NAME = re.compile(r"(?:->|::|^[$*\s]*|\s)(\w+)\s*(?:\(|$|\s)")  # `$obj->name(...)`, `Pkg::name`, `name`
POD_MARKUP = re.compile(r"[BICFLSEX]<+\s*([^<>]*?)\s*>+")
# What may follow a file's own header comment directly: the statement that the comment is about as a whole.
FILE_LEVEL_LINE = re.compile(r"^(package|module|namespace|library|unit)\b|^<\?php|^#!|^import\b|^use strict")
FILE_LEVEL_MARK = re.compile(r"^\s*(//!|/\*!)|@(file|fileoverview|overview|module|package)\b", re.MULTILINE)


@dataclass(frozen=True)
class Pair:
    kind: str  # docstring | doc_comment | file_header | readme_section
    description: str
    code: str
    language: str
    path: str  # relative to the package root
    symbol: str  # qualified name of the definition, or "" for file and README pairs

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _bounded(lines: list[str], max_lines: int) -> str:
    code = textwrap.dedent("\n".join(lines[:max_lines])).strip("\n")
    return code[:MAX_CODE_CHARS]


def _enough_code(code: str) -> bool:
    return len(WORD.findall(code)) >= MIN_CODE_TOKENS


def python_pairs(path: str, text: str) -> list[Pair]:
    """Docstring pairs of every documented def and class, and the module docstring's file pair."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old code
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # Python 2 or broken: nothing to trust
    lines = text.split("\n")
    out: list[Pair] = []

    def doc_range(body: list[ast.stmt]) -> tuple[int, int] | None:
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.end_lineno is not None
        ):
            return first.lineno, first.end_lineno
        return None

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = f"{prefix}.{child.name}" if prefix else child.name
                span = doc_range(child.body)
                doc = ast.get_docstring(child, clean=True)
                if span and doc and span[0] > child.lineno and child.end_lineno is not None:
                    description = comments.clean(doc)
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    kept = lines[start - 1 : span[0] - 1] + lines[span[1] : child.end_lineno]
                    code = _bounded(kept, MAX_DEF_LINES)
                    body_left = len(child.body) > 1
                    if description and body_left and _enough_code(code):
                        kind = "docstring"
                        out.append(Pair(kind, description, code, "python", path, qualified))
                visit(child, qualified)

    visit(tree, "")
    span = doc_range(tree.body)
    doc = ast.get_docstring(tree, clean=True)
    if span and doc:
        description = comments.clean(doc)
        code = _bounded(lines[: span[0] - 1] + lines[span[1] :], MAX_FILE_LINES)
        if description and _enough_code(code):
            out.append(Pair("file_header", description, code, "python", path, ""))
    return out


def _leading_comment(lines: list[str], start: int, language: str) -> tuple[int, str] | None:
    """A doc comment that a parser put inside the definition's own first lines: (first code line, text)."""
    blocks = comments.header_comments(lines[start:], language)
    if blocks and blocks[0][0] == 0 and lines[start].strip():
        return start + blocks[0][1] + 1, blocks[0][2]
    return None


def definition_pairs(path: str, language: str, text: str) -> list[Pair]:
    """Doc-comment pairs of the definitions the product's parser finds, plus C-family declarations."""
    from codesearch.common.parsing import extract  # loads tree-sitter; only the worker needs it

    extraction = extract(path, language, text.encode("utf-8"))
    if extraction is None:
        return []
    lines = text.split("\n")
    out: list[Pair] = []
    covered: set[int] = set()
    for d in extraction.definitions:
        start, end = d.start_line - 1, min(d.end_line, len(lines))
        covered.update(range(start, end))
        found = comments.comment_above(lines, start, language)
        if found is not None:
            code_start, raw = found[1] + 1, found[2]
        else:
            inner = _leading_comment(lines, start, language)
            if inner is None:
                continue
            code_start, raw = inner
        if code_start >= end:
            continue
        description = comments.clean(raw)
        code = _bounded(lines[code_start:end], MAX_DEF_LINES)
        if description and _enough_code(code):
            out.append(Pair("doc_comment", description, code, language, path, d.qualified_name))
    if language in C_FAMILY:
        out.extend(_declaration_pairs(path, language, lines, covered))
    if language == "perl":
        out.extend(
            pod_pairs(path, lines, [(d.name, d.start_line - 1, d.end_line) for d in extraction.definitions])
        )
    return out


def _pod_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last line index) of each POD block: from a `=word` line at column 0 to its `=cut` (or the end)."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if POD_START.match(lines[i]):
            j = i
            while j < len(lines) and not lines[j].startswith("=cut"):
                j += 1
            spans.append((i, min(j, len(lines) - 1)))
            i = j + 1
        else:
            i += 1
    return spans


def _pod_paragraph(lines: list[str], i: int, end: int) -> str:
    """The first prose paragraph after a POD command line (verbatim, indented, blocks are code: skipped)."""
    kept: list[str] = []
    for line in lines[i + 1 : end + 1]:
        if line.startswith("="):
            break
        if not line.strip():
            if kept:
                break
            continue
        if line[:1].isspace():
            if kept:
                break
            continue
        kept.append(POD_MARKUP.sub(lambda m: m.group(1), line.strip()))
    return " ".join(kept)


def pod_pairs(path: str, lines: list[str], defs: list[tuple[str, int, int]]) -> list[Pair]:
    """Perl documents in POD: `=head2 name` or `=item name(...)` and its paragraph, with the `sub name` it names.

    The code side is the sub's own lines, any POD inside them removed; `=head1 NAME`'s `Module - what it is`
    line, with the file less its POD, is the file's header pair.
    """
    spans = _pod_spans(lines)
    if not spans:
        return []
    in_pod = {i for a, b in spans for i in range(a, b + 1)}
    subs: dict[str, tuple[int, int]] = {}
    for name, start, end in defs:
        subs.setdefault(name, (start, end))
    out: list[Pair] = []
    used: set[str] = set()
    for a, b in spans:
        for i in range(a, b + 1):
            m = POD_ITEM.match(lines[i])
            if m is None:
                continue
            word = POD_NAME.search(POD_MARKUP.sub(lambda x: x.group(1), m.group(2)))
            name = word.group(1) if word else ""
            if m.group(1) == "head1" and m.group(2).strip() == "NAME":
                desc = _pod_paragraph(lines, i, b)
                what = desc.split(" - ", 1)[1] if " - " in desc else ""
                description = comments.clean(what)
                code = _bounded([x for k, x in enumerate(lines) if k not in in_pod], MAX_FILE_LINES)
                if description and _enough_code(code) and "" not in used:
                    used.add("")
                    out.append(Pair("file_header", description, code, "perl", path, ""))
                continue
            if name not in subs or name in used or m.group(1) == "head1":
                continue
            description = comments.clean(_pod_paragraph(lines, i, b))
            start, end = subs[name]
            code = _bounded(
                [x for k, x in enumerate(lines[start:end], start) if k not in in_pod], MAX_DEF_LINES
            )
            if description and _enough_code(code):
                used.add(name)
                out.append(Pair("doc_comment", description, code, "perl", path, name))
    return out


def _declaration_pairs(path: str, language: str, lines: list[str], covered: set[int]) -> list[Pair]:
    """Doc comments on prototypes and declarations, which the parser does not count as definitions."""
    out: list[Pair] = []
    for i, line in enumerate(lines):
        s = line.strip()
        if i in covered or not s or s.startswith(("/", "*", "#", "}")) or i == 0:
            continue
        found = comments.comment_above(lines, i, language)
        if found is None or not lines[found[0]].strip().startswith(DOC_OPENERS):
            continue
        end = next(
            (j for j in range(i, min(i + MAX_DECL_LINES, len(lines))) if lines[j].rstrip().endswith(";")), -1
        )
        if end < 0 or any(j in covered for j in range(i, end + 1)):
            continue
        description = comments.clean(found[2])
        code = _bounded(lines[found[1] + 1 : end + 1], MAX_DECL_LINES)
        if description and _enough_code(code):
            symbol = next(iter(re.findall(r"(\w+)\s*\(", code)), "")
            out.append(Pair("doc_comment", description, code, language, path, symbol))
    return out


def _documents_next_line(lines: list[str], first: int, last: int) -> bool:
    """Whether a top-of-file comment sits on the definition below it (then it is that definition's doc comment).

    A file's own comment is followed by a blank line, or by the line it documents as a whole (`package x`),
    or says so itself (`//!`, `@file`, `@fileoverview`, `@module`).
    """
    after = lines[last + 1].strip() if last + 1 < len(lines) else ""
    if not after or FILE_LEVEL_LINE.match(after):
        return False
    return not FILE_LEVEL_MARK.search("\n".join(lines[first : last + 1]))


def header_pair(path: str, language: str, text: str) -> Pair | None:
    """A file's first comment that describes it (not a licence, not generated) and the file without it."""
    lines = text.split("\n")
    for first, last, raw in comments.header_comments(lines, language):
        if _documents_next_line(lines, first, last):
            return None
        description = comments.clean(raw)
        if description:
            code = _bounded(lines[:first] + lines[last + 1 :], MAX_FILE_LINES)
            if _enough_code(code):
                return Pair("file_header", description, code, language, path, "")
            return None
        if comments.GENERATED.search(raw):
            return None  # a generated file: neither its header nor its code
    return None


def file_pairs(path: str, language: str, text: str) -> list[Pair]:
    """Every pair of one source file."""
    if language == "python":
        return python_pairs(path, text)
    out = definition_pairs(path, language, text)
    header = header_pair(path, language, text)
    return [*out, header] if header else out


def readme_pairs(
    readme: str, text: str, files: dict[str, str], read: Callable[[str], str | None]
) -> list[Pair]:
    """Each README section that names a source file of the package: (heading and first paragraph, that file).

    `files`: the package's source files (relative path -> language); `read` gives a file's text or None.
    """
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(PurePosixPath(rel).name, []).append(rel)
    base = str(PurePosixPath(readme).parent)
    out: list[Pair] = []
    in_fence = False
    sections: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        heading = None if in_fence else MD_HEADING.match(line)
        if heading:
            sections.append((heading.group(2).strip(), []))
        elif sections:
            sections[-1][1].append(line)
    for title, body in sections:
        named = _named_file(body, base, files, by_name)
        if named is None:
            continue
        prose = "\n".join(_prose(body))
        description = comments.clean(f"{title.rstrip(':.')}: {prose}" if prose else "")
        code = read(named)
        if not description or code is None:
            continue
        snippet = _bounded(code.split("\n"), MAX_FILE_LINES)
        if _enough_code(snippet):
            out.append(Pair("readme_section", description, snippet, files[named], named, ""))
        if len(out) >= MAX_README_PAIRS:
            break
    return out


def _prose(body: list[str]) -> list[str]:
    """A section's lines outside code fences, with Markdown link and emphasis marks folded."""
    in_fence = False
    out: list[str] = []
    for line in body:
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or line.startswith("    ") or line.lstrip().startswith(("|", "<", "![")):
            continue
        out.append(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line).replace("`", "").replace("**", ""))
    return out


def _named_file(
    body: list[str], base: str, files: dict[str, str], by_name: dict[str, list[str]]
) -> str | None:
    for mention in PATH_MENTION.findall("\n".join(body)):
        mention = mention.lstrip("./")
        for candidate in (f"{base}/{mention}" if base not in ("", ".") else mention, mention):
            if candidate in files:
                return candidate
        same = by_name.get(PurePosixPath(mention).name, [])
        if len(same) == 1 and "/" not in mention:
            return same[0]
    return None
