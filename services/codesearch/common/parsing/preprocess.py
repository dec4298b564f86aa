"""Second-chance sources for C-family files that tree-sitter could not parse cleanly.

tree-sitter parses C, C++, Objective-C and C# without running the preprocessor, so two things break it on real
code: `#if/#else` branches that each open half of a statement, and macros that stand where the grammar expects
nothing (`ABSL_NAMESPACE_BEGIN` on its own line, `void f() WARN_UNUSED_RESULT;`). Each function here returns a
source of the same length with those bytes replaced by spaces, so every byte offset and line number stays
valid against the original text. The engine parses it only when the first parse had errors and keeps whichever
tree has fewer (abseil-cpp: 685 of 858 files with errors -> see the note of issue 18 for the figure after).
"""

from __future__ import annotations

import re

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w+)")
# A line that is only an upper-case macro name (`ABSL_NAMESPACE_BEGIN`, `NS_ASSUME_NONNULL_END`) or such a macro
# with arguments (`ABSL_DEPRECATED("use g")`), standing before a declaration.
_MACRO_LINE = re.compile(rb"^[ \t]*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[ \t]*(?:\([^()\n]*\))?[ \t]*$", re.MULTILINE)
# An attribute-like macro between a declarator and `;`, `=` or `{` (`) WARN_UNUSED_RESULT;`, `x ABSL_ATTRIBUTE_UNUSED =`),
# between `class` and its name (`class ABSL_ATTRIBUTE_VIEW Span`), or before a type at a declaration's start
# (`static CURL_INLINE void`, `UNITTEST void f`): upper case, no call parentheses.
_ARGS = rb"(?:\((?:[^()\n]|\([^()\n]*\))*\))?"  # optional arguments, one level of nested parentheses
_UPPER_MACRO = rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_ATTRIBUTE_MACRO = re.compile(
    rb"(?<=[\w)*&>] )" + _UPPER_MACRO + _ARGS + rb"(?=\s*[;={])"
    rb"|(?:(?<=\bstatic )|(?<=\bclass )|(?<=\bstruct )|(?<=\bunion ))" + _UPPER_MACRO + rb"(?= [A-Za-z_])"
    rb"|(?:(?m:^)[ \t]*|(?<=\]\] )|(?<=\binline )|(?<=\"C\" ))"
    + _UPPER_MACRO
    + rb"(?= (?:static|const|constexpr|inline"
    rb"|extern|struct|enum|unsigned|void|int|char|bool|std::|absl::|[A-Z]\w*[ <*&:]))"
    rb"|(?m:^)[A-Z][A-Z0-9]{3,}(?= (?:static|const|struct|enum|unsigned|void|int|char|bool)\b)"
)
# Bolder guesses, tried only when the above leaves errors: a macro before `)` or `,` (a parameter's
# `ABSL_ATTRIBUTE_LIFETIME_BOUND`), a calling convention (`BOOL WINAPI DllMain(`), a line-start macro before a
# typedef'd return type (`UNITTEST CURLcode f(`), a lower-case pointer qualifier (`T* absl_nullable p`).
_BOLD_MACRO = re.compile(
    rb"(?<=[\w*&>] )[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?=\s*[),])"
    rb"|(?m:^)[A-Z][A-Z0-9]{3,}(?:_[A-Z0-9]+)*(?= [A-Za-z_]\w*[ *]+\w+\()"
    rb"|(?<=[A-Z] )[A-Z][A-Z0-9]{3,}(?:_[A-Z0-9]+)*(?= \**\w+\()"
    rb"|(?<=\* )[a-z]+_[a-z_]+(?=[ ;,)>=])"  # a pointer qualifier macro: `T* absl_nonnull p`
)


def _blank(match: re.Match[bytes]) -> bytes:
    return b" " * len(match.group(0))


def keep_first_branches(source: bytes) -> bytes:
    """Blanks the `#elif`/`#else` branches of every conditional and the conditional directives themselves (they
    stand inside statements and expressions, where the grammar has no place for them); `#if` branches stay."""
    lines = source.split(b"\n")
    dropping: list[bool] = []  # per open conditional: inside a dropped branch
    continued = False  # the previous line was a conditional directive ending in a backslash
    for i, line in enumerate(lines):
        if continued:
            continued = line.endswith(b"\\")
            lines[i] = b" " * len(line)
            continue
        m = _DIRECTIVE.match(line)
        word = m.group(1) if m else b""
        if word in (b"if", b"elif") and line.endswith(b"\\"):
            continued = True
        if word in (b"error", b"warning"):  # a kept branch may be the one that stops the build
            blank = True
        elif word in (b"if", b"ifdef", b"ifndef"):
            dropping.append(False)
            blank = True
        elif word in (b"elif", b"else", b"elifdef", b"elifndef") and dropping:
            dropping[-1] = True
            blank = True
        elif word == b"endif" and dropping:
            dropping.pop()
            blank = True
        else:
            blank = any(dropping)
        if blank:
            lines[i] = b" " * len(line)
    return b"\n".join(lines)


def blank_macros(source: bytes) -> bytes:
    """Blanks macro lines and attribute-like macros (see the module docstring)."""
    return _ATTRIBUTE_MACRO.sub(_blank, _MACRO_LINE.sub(_blank, source))


def c_family_retries(source: bytes) -> list[bytes]:
    """Candidates, the likeliest first; the engine keeps the first clean one, else the best.

    On the 794 curl and abseil-cpp files whose first parse had errors, branches-and-macros was the best candidate
    for 708 and clean for 525, the bolder one clean for 486 (565 clean with either); branches alone was clean for
    only 50 and is not tried, which keeps retries at ~1.3 parses per such file (3 parses took 27 s there, the
    first parses of all files 7.5 s).
    """
    macros = blank_macros(keep_first_branches(source))
    return [macros, _BOLD_MACRO.sub(_blank, macros)]


def csharp_retries(source: bytes) -> list[bytes]:
    return [keep_first_branches(source)]
