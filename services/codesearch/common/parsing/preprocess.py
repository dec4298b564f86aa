"""Second-chance sources for files that tree-sitter could not parse cleanly (the C family; a few grammar gaps of
Swift, Kotlin and TypeScript at the end).

tree-sitter parses C, C++, Objective-C and C# without running the preprocessor, so two things break it on real
code: `#if/#else` branches that each open half of a statement, and macros that stand where the grammar expects
nothing (`ABSL_NAMESPACE_BEGIN` on its own line, `void f() WARN_UNUSED_RESULT;`, `VERBOSE(int i);`). Each function
here returns a source of the same length with those bytes replaced by spaces (newlines kept), so every byte offset
and line number stays valid against the original text. The engine parses it only when the first parse had errors
and keeps whichever tree has fewer (figures per repository in the note of issue 18).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from codesearch.common.parsing.blanking import blank as _blank
from codesearch.common.parsing.blanking import blank_group as _blank_group
from codesearch.common.parsing.blanking import spaces as _spaces
from codesearch.common.parsing.conditionals import whole_conditionals
from codesearch.common.parsing.cpp_gaps import rewrite_cpp_gaps

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w+)")
_LATER_BRANCH = re.compile(rb"(?m)^[ \t]*#[ \t]*el(?:se|if)")
_UPPER_MACRO = rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_ARGS = rb"(?:\((?:[^()\n]|\([^()\n]*\))*\))?"  # optional arguments, one level of nested parentheses
# A line that is only an upper-case macro name (`ABSL_NAMESPACE_BEGIN`, `NS_ASSUME_NONNULL_END`) or such a macro
# with arguments (`ABSL_DEPRECATED("use g")`), standing before a declaration.
_MACRO_LINE = re.compile(rb"^[ \t]*" + _UPPER_MACRO + rb"[ \t]*(?:\([^()\n]*\))?[ \t]*$", re.MULTILINE)
# An attribute-like macro before `;`, `=` or `{` (`) WARN_UNUSED_RESULT;`, `x ABSL_ATTRIBUTE_UNUSED =`): blanked
# only where the word before it ends a declarator (see _ends_declarator), not in `struct spec NAME = {`.
_TRAILING_MACRO = re.compile(rb"(?=[A-Z])(?<=[\w)\]] )(?<!define )" + _UPPER_MACRO + _ARGS + rb"(?=\s*[;={])")
# The same macro on its own continuation line after a declarator (`const\n    ABSL_ATTRIBUTE_LIFETIME_BOUND {`,
# `size_t len)\n  WARN_UNUSED_RESULT CURL_PRINTF(2, 3);`).
# Starts on the newline, the lookbehinds after it: led by the lookbehinds, every byte of the file tried all four
# (1.23 s against 0.05 s over curl's and abseil-cpp's C/C++ files, the same output on every one of them).
_CONTINUATION_MACROS = re.compile(
    rb"\n(?:(?<=\)\n)|(?<=\bconst\n)|(?<=\boverride\n)|(?<=\bnoexcept\n))[ \t]*"
    rb"(" + _UPPER_MACRO + _ARGS + rb"(?:[ \t]+" + _UPPER_MACRO + _ARGS + rb")*)(?=[ \t]*[;{=])"
)
# What follows a leading macro: a declaration's specifier or type (the return type may be on the next line).
_TYPE_AHEAD = (
    rb"[ \t]+(?:static|const|constexpr|inline|extern|struct|class|enum|unsigned|void|int|char|bool|thread_local"
    rb"|std::|absl::|[A-Z]\w*[ \t<*&:\n]|[a-z]\w*_t\b)"
)
# A macro between `class` and its name (`class ABSL_ATTRIBUTE_VIEW Span`) or before a type at a declaration's
# start (`static CURL_INLINE void`, `UNITTEST void f`, `ABSL_DLL ctrl_t x`, a return type on the next line).
_LEADING_MACRO = re.compile(
    rb"(?=[A-Z])(?:"  # every alternative starts with the macro: positions before anything else fail at once
    rb"(?:(?<=\bclass )|(?<=\bstruct )|(?<=\bunion ))(?:" + _UPPER_MACRO + _ARGS + rb" )+"
    rb"(?=[A-Za-z_]\w*\s*(?:[{:]|final\b))"
    rb"|(?:(?<=\bstatic )|(?<=\bextern ))" + _UPPER_MACRO + rb"(?= [A-Za-z_][\w:]*[ \t*&]+[A-Za-z_(])"
    rb"|(?:(?<=\]\] )|(?<=\binline )|(?<=\"C\" ))" + _UPPER_MACRO + _ARGS + rb"(?=" + _TYPE_AHEAD + rb")"
    rb"|(?<=\n)[A-Z][A-Z0-9]{3,}(?= (?:static|const|struct|enum|unsigned|void|int|char|bool)\b)"
    rb")"
)
# The same at a line's start, after its indentation (a chain: `ABSL_CONST_INIT ABSL_DLL const ctrl_t x`).
_LINE_LEADING_MACROS = re.compile(
    rb"(?m)^[ \t]*((?:"
    + _UPPER_MACRO
    + _ARGS
    + rb"[ \t]+)*"
    + _UPPER_MACRO
    + _ARGS
    + rb")(?="
    + _TYPE_AHEAD
    + rb")"
)
# A macro between a declaration's type and its name (`void ABSL_ATTRIBUTE_NOINLINE f(`, `int
# ABSL_ATTRIBUTE_SECTION_VARIABLE(.text) g(`, `uint32_t* ABSL_RANDOM_INTERNAL_RESTRICT p)`), and one between `if` and
# its condition (`if ABSL_INTERNAL_CONSTEXPR_SINCE_CXX17 (x)`): no valid code has an upper-case word there.
_INNER_MACRO = re.compile(
    rb"(?=[A-Z])(?:(?<=\w )(?<!define )" + _UPPER_MACRO + _ARGS + rb"(?= [A-Za-z_]\w*\()"
    rb"|(?<=\* )" + _UPPER_MACRO + rb"(?= [A-Za-z_]\w*[,)])"
    rb"|(?<=\bif )" + _UPPER_MACRO + rb"(?= \())"
)
# String arguments of a definition-like macro at column 0 (`MATCHER_P(IsElement, key, "") {`), which the grammar
# reads as a parameter list.
_DEFINITION_MACRO_STRING = re.compile(rb"(?m)^(?=" + _UPPER_MACRO + rb"\([^()\n]*\)[ \t]*\{)[^\n]*")
_STRING_ARGUMENT = re.compile(rb',[ \t]*"(?:[^"\\\n]|\\.)*"')
# Calling conventions and export specifiers of the Windows headers, which tree-sitter-c does not know.
_CALLING_CONVENTION_WORDS = (
    b"API",
    b"CALLBACK",
    b"_CRTIMP",
    b"__cdecl",
    b"__stdcall",
    b"__fastcall",
    b"__declspec",
)
_CALLING_CONVENTION = re.compile(
    rb"\b(?:WINAPI|WINAPIV|APIENTRY|CALLBACK|WINBASEAPI|_CRTIMP|__cdecl|__stdcall|__fastcall)\b"
    rb"|\b__declspec\([^()\n]*\)"
)
# A statement-level macro wrapping a declaration (curl's `VERBOSE(const char *p = NULL);`): the wrapper's name and
# parentheses are blanked, the declaration stays.
_WRAPPED_DECLARATION = re.compile(
    rb"(?m)^([ \t]*)(" + _UPPER_MACRO + rb"|[A-Z]{3,})\("
    rb"((?:const |unsigned |signed |struct |static )*[A-Za-z_][\w:]*(?:<[^<>\n]*>)?[ \t*&]+[A-Za-z_]\w*"
    rb"(?:\[[^\]\n]*\])?(?:[ \t]*=[^;]*)?)\);[ \t]*$"
)
# clang's `__builtin_available(macOS 10.9, iOS 7, *)` takes platform names; its arguments become `1`.
_BUILTIN_AVAILABLE = re.compile(rb"(?<=\b__builtin_available\()([^()\n]+)(?=\))")
# A function-like macro given a bare type in an assignment (`avalue = form_ptr_arg(char *);`): the type becomes `0`.
_TYPE_ARGUMENT = re.compile(
    rb"= (?!(?:sizeof|alignof|alignas|decltype|typeid)\()[A-Za-z_]\w*\(((?:const |struct |unsigned )*[A-Za-z_]\w*[ \t]*\*+[ \t]*)\)(?=[ \t]*;)"
)
# `va_arg(ap, T)` takes a type where the grammar wants an expression; the type becomes `0`.
_VA_ARG = re.compile(rb"\bva_arg\([^,()\n]+,([^()\n]+)\)")
# Empty macro arguments (`CS_ENTRY(0x1301, TLS,AES,128,GCM,SHA256,,,)`): the commas of empty slots.
_EMPTY_ARGUMENTS = re.compile(rb",(?=[ \t]*[,)])")
# A macro invocation statement at column 0 whose arguments are not expressions (`ABSL_FLAG(int, n, 1, "doc");`,
# `ABSL_DECLARE_FLAG(bool, v);`): at file or namespace level it can only be a macro, so it is blanked whole.
# Also with a call chain (`BENCHMARK_TEMPLATE(BM_f, int)->Range(0, 1 << 16);`) and over several lines.
_INVOCATION_ARGS = rb"\((?:[^;{}()]|\((?:[^;{}()]|\([^;{}()]*\))*\))*\)"
_TOP_LEVEL_INVOCATION = re.compile(
    rb"(?m)^"
    + _UPPER_MACRO
    + _INVOCATION_ARGS
    + rb"(?:\s*(?:->|\.)\s*\w+"
    + _INVOCATION_ARGS
    + rb")*;[ \t]*$"
)
# A member-level macro with a parenthesized list as a whole argument (gMock's `MOCK_METHOD(int, f, (), (const));`):
# a signature, not an expression; blanked whole. The lists end the arguments and hold no calls: not a cast or a
# grouped operand (`f(a, (int)n)`, `EXPECT_EQ(2, (RangeSize<U>()))`).
_MEMBER_MACRO = re.compile(
    rb"(?m)^[ \t]+"
    + _UPPER_MACRO
    + rb"(?=\((?:[^;{}()\"]|\([^;{}()\"]*\))*,\s*\([^;{}()]*\)\s*(?:,\s*\([^;{}()]*\)\s*)?\);)"
    + _INVOCATION_ARGS
    + rb";[ \t]*$"
)
# An object-like macro the file itself defines as nothing or as a qualifier (`#define vqualifier volatile`).
_QUALIFIER_DEFINE = re.compile(
    rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]*(?:volatile|const|static|inline|extern)?[ \t]*(?://.*|/\*.*)?$"
)
# Bolder guesses, tried only when the above leaves errors: a macro before `)` or `,` (a parameter's
# `ABSL_ATTRIBUTE_LIFETIME_BOUND`), a line-start macro before a typedef'd return type (`UNITTEST CURLcode f(`), a
# lower-case pointer qualifier (`T* absl_nullable p`).
_BOLD_MACRO = re.compile(
    rb"(?=[A-Za-z])(?:"
    rb"(?<=\w )(?<!define )[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?=\s*[),])"
    rb"|(?m:^)[A-Z][A-Z0-9]{3,}(?:_[A-Z0-9]+)*(?= [A-Za-z_]\w*[ *]+\w+\()"
    rb"|(?<=[A-Z] )[A-Z][A-Z0-9]{3,}(?:_[A-Z0-9]+)*(?= \**\w+\()"
    rb"|(?<=\* )[a-z]+_[a-z_]+(?=[ ;,)>=])"  # a pointer qualifier macro: `T* absl_nonnull p`
    rb")"
)
# Words before an identifier that make it a type, not a declarator (`struct spec NAME = {`, `const int MAX = 1`).
_TYPE_PREFIXES = frozenset(
    b"struct enum union class const static volatile extern constexpr inline typedef unsigned signed long short "
    b"register thread_local return case".split()
)
_TYPE_WORDS = frozenset(b"int char bool void float double long short unsigned signed size_t auto".split())
# A line ending in one of these continues an expression: a macro on the next line is its operand
# (`ver =\n#ifdef A\n    VERSION_A\n#else ...`), not a declaration's attribute.
_EXPRESSION_OPENERS = tuple(c.encode() for c in "=(,+-*/|&?<[!~%^")
# A `#define` with its continuation lines that holds a block comment (`/* NOLINT */ \`), and the comment.
_DEFINE_LINES = re.compile(rb"(?m)^[ \t]*#[ \t]*define(?=[^\n]*\\\n)(?:[^\n\\]|\\.|\\\n)*")
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.S)
# What continues an invocation on the next line as an expression: a stream (`<< "why"`) or a call chain
# (`EXPECT_CALL(*this, Send)\n    .Times(1)`); the line is then a statement, not a macro standing alone.
_CONTINUED = re.compile(rb"\s*(?:<<|->|\.[A-Za-z_])")
_METHOD_QUALIFIERS = frozenset(b"const noexcept override final".split())
_LINE_TOKENS = re.compile(rb"[A-Za-z_][\w:]*|[*&)\]>}]")


def _ends_declarator(source: bytes, at: int) -> bool:
    """Whether the code before `at` on its line ends a declarator (`int x`, `f(int a)`, `buf[4]`), so an upper-case
    word at `at` is an attribute macro and not the declared name itself."""
    line_start = source.rfind(b"\n", 0, at) + 1
    tokens = _LINE_TOKENS.findall(source[line_start:at])
    if not tokens or b"new" in tokens:  # `::new (buf) CONDITION_VARIABLE;`: placement new's type
        return False
    while len(tokens) > 1 and tokens[-1] in _METHOD_QUALIFIERS:  # `f() const ABSL_ATTRIBUTE_LIFETIME_BOUND {`
        tokens.pop()
    last = tokens[-1]
    if last in (b")", b"]", b"}"):
        return True
    if last in _TYPE_WORDS or last in _TYPE_PREFIXES or len(tokens) < 2:
        return False
    return tokens[-2] not in _TYPE_PREFIXES


def _in_comment(source: bytes, at: int) -> bool:
    """Whether the byte at `at`, the last of its line before a macro line, ends a comment (`// ---`, `*/`), not an
    expression."""
    return source[at - 1 : at + 1] == b"*/" or b"//" in source[source.rfind(b"\n", 0, at) + 1 : at + 1]


def _blank_macro_line(source: bytes) -> Callable[[re.Match[bytes]], bytes]:
    def blank(match: re.Match[bytes]) -> bytes:
        at = match.start() - 1
        while at >= 0 and source[at] in b" \t\r\n":  # back over blank lines, without copying the source
            at -= 1
        inside_expression = (
            at >= 0 and source[at : at + 1] in _EXPRESSION_OPENERS and not _in_comment(source, at)
        ) or source[
            at : at + 1
        ] == b"\\"  # a `#define`'s body: blanked, the directive would take the next line
        continued = _CONTINUED.match(source, match.end()) is not None  # `EXPECT_LE(a, b)\n  << "why";`
        return match.group(0) if inside_expression or continued else _spaces(match.group(0))

    return blank


def _blank_string_arguments(match: re.Match[bytes]) -> bytes:
    return _STRING_ARGUMENT.sub(_blank, match.group(0))


def _blank_trailing(source: bytes) -> bytes:
    def blank(match: re.Match[bytes]) -> bytes:
        return _spaces(match.group(0)) if _ends_declarator(source, match.start()) else match.group(0)

    return _TRAILING_MACRO.sub(blank, source)


def _unwrap_declaration(match: re.Match[bytes]) -> bytes:
    indent, name, inner = match.group(1), match.group(2), match.group(3)
    rest = match.group(0)[len(indent) + len(name) + 1 + len(inner) :]  # `);` and trailing blanks
    return indent + _spaces(name) + b" " + inner + b" " + rest[1:]


def _zero_argument(match: re.Match[bytes]) -> bytes:
    """Group 1 (a type or platform list where an expression belongs) becomes `0` and spaces."""
    whole = match.group(0)
    start = match.start(1) - match.start(0)
    kind = match.group(1)
    return whole[:start] + b"0" + _spaces(kind[1:]) + whole[start + len(kind) :]


def _blank_defined_qualifiers(source: bytes) -> bytes:
    names = set(_QUALIFIER_DEFINE.findall(source))
    if not names:
        return source
    uses = re.compile(
        rb"(?<!define )(?<!undef )\b(?:"
        + b"|".join(re.escape(n) for n in sorted(names))
        + rb")\b(?![ \t]*\()"
    )
    return uses.sub(_blank, source)


def keep_first_branches(source: bytes, whole: set[int] | None = None) -> bytes:
    """Blanks the `#elif`/`#else` branches of every conditional and the conditional directives themselves (they
    stand inside statements and expressions, where the grammar has no place for them); `#if` branches stay. A
    comment that a blanked directive opens (`#endif /* A ||\\n  B */`) is blanked to its end. The conditionals
    whose `#if` line is in `whole` (conditionals.whole_conditionals) keep every branch, one after the other."""
    lines = source.split(b"\n")
    dropping: list[
        bool | None
    ] = []  # per open conditional: inside a dropped branch (None: every branch kept)
    continued = False  # the previous line was a conditional directive ending in a backslash
    in_comment = False  # inside a block comment a blanked directive opened
    for i, line in enumerate(lines):
        if in_comment:
            end = line.find(b"*/")
            in_comment = end < 0
            lines[i] = _spaces(line) if in_comment else _spaces(line[: end + 2]) + line[end + 2 :]
            continue
        if continued:
            continued = line.endswith(b"\\")
            lines[i] = _spaces(line)
            continue
        m = _DIRECTIVE.match(line)
        word = m.group(1) if m else b""
        if word in (b"if", b"elif") and line.endswith(b"\\"):
            continued = True
        if word in (b"error", b"warning", b"pragma"):  # a kept branch may stop the build; pragmas say nothing
            blank = True
        elif word in (b"if", b"ifdef", b"ifndef"):
            dropping.append(None if whole and i in whole else False)
            blank = True
        elif word in (b"elif", b"else", b"elifdef", b"elifndef") and dropping:
            if dropping[-1] is not None:
                dropping[-1] = True
            blank = True
        elif word == b"endif" and dropping:
            dropping.pop()
            blank = True
        else:
            blank = any(dropping)
        if blank:
            lines[i] = _spaces(line)
            if m and line.rfind(b"/*") > line.rfind(b"*/"):
                in_comment = True
    return b"\n".join(lines)


def _blank_define_comments(source: bytes) -> bytes:
    """Block comments inside a `#define` that continues past them are blanked: the preprocessor reads a comment as a
    space, but tree-sitter's directive text stops at one and the rest of the body is read as code."""
    if b"/*" not in source or b"define" not in source:
        return source
    return _DEFINE_LINES.sub(lambda m: _BLOCK_COMMENT.sub(_blank, m.group(0)), source)


def blank_macros(source: bytes) -> bytes:
    """Blanks macro lines, attribute-like macros, wrapped declarations and the other forms above."""
    source = _blank_define_comments(source)
    source = _TOP_LEVEL_INVOCATION.sub(_blank, source)  # before the macro lines: it may continue past one
    source = _MACRO_LINE.sub(_blank_macro_line(source), source)
    if b", (" in source:
        source = _MEMBER_MACRO.sub(_blank, source)
    if any(word in source for word in _CALLING_CONVENTION_WORDS):  # a pass costs ~0.1 s per MB: skip it
        source = _CALLING_CONVENTION.sub(_blank, source)  # where the file holds none of its words
    source = _WRAPPED_DECLARATION.sub(_unwrap_declaration, source)
    if b"va_arg" in source:
        source = _VA_ARG.sub(_zero_argument, source)
    source = _TYPE_ARGUMENT.sub(_zero_argument, source)
    if b"__builtin_available" in source:
        source = _BUILTIN_AVAILABLE.sub(_zero_argument, source)
    source = _EMPTY_ARGUMENTS.sub(_blank, source)
    source = _CONTINUATION_MACROS.sub(_blank_group(1), source)
    source = _INNER_MACRO.sub(_blank, source)
    source = _DEFINITION_MACRO_STRING.sub(_blank_string_arguments, source)
    source = _blank_defined_qualifiers(source)
    source = _LINE_LEADING_MACROS.sub(_blank_group(1), source)
    return _LEADING_MACRO.sub(_blank, _blank_trailing(source))


def c_family_retries(source: bytes) -> Iterator[bytes]:
    """Candidates, the likeliest first, made as the engine asks for them: it keeps the first clean one, else the
    best (the earlier one of two as good), so the bolder one is not even made when the first is clean.

    Branches alone was clean for only 50 of the 794 curl and abseil-cpp files whose first parse had errors and is
    not tried, which keeps retries at ~1.3 parses per such file. The C++ rewrites come second: their passes cost
    about one parse per file (2.9 ms against 2.9 ms over abseil-cpp), and most files are clean without them. The
    conditionals whose branches each hold whole statements or declarations keep every branch (their definitions
    in `#else` are indexed: 189 in abseil-cpp and 74 in curl were not); where that is not clean, the first
    branches alone are tried after.
    """
    whole = whole_conditionals(source) if _LATER_BRANCH.search(source) else set()
    macros = blank_macros(keep_first_branches(source, whole))
    yield macros
    rewritten = rewrite_cpp_gaps(macros)
    yield rewritten  # the engine skips a candidate it has parsed already
    first_only = rewrite_cpp_gaps(blank_macros(keep_first_branches(source))) if whole else rewritten
    yield first_only
    yield _BOLD_MACRO.sub(_blank, rewritten)
    yield _BOLD_MACRO.sub(_blank, first_only)


def csharp_retries(source: bytes) -> list[bytes]:
    return [keep_first_branches(source)]


# Swift: a compile-time diagnostic line (`#error("no lock here")`, valid inside a type's `#if`), which
# tree-sitter-swift 0.7.4 reads only at the top level, and the empty tuple as an argument (`.success(())`,
# `Result(value: (), error: e)`), which it does not read at all; the tuple becomes `0`.
_SWIFT_DIAGNOSTIC = re.compile(rb'(?m)^[ \t]*#(?:error|warning)\("(?:[^"\\\n]|\\.)*"\)[ \t]*$')
_SWIFT_VOID_ARGUMENT = re.compile(rb"(?:(?<=\()|(?<=: ))\(\)(?=[),])")


def swift_retries(source: bytes) -> list[bytes]:
    blanked = _SWIFT_DIAGNOSTIC.sub(_blank, source)
    return [_SWIFT_VOID_ARGUMENT.sub(lambda _m: b"0 ", blanked)]


# Kotlin: a `when` entry that starts with `else`, `in` or `is` on the line after the previous entry's value
# (`x -> if (c) return` / `else -> ...`, `a -> f(b)` / `in 400..499 -> g()`); tree-sitter-kotlin takes that word as
# the if's `else` or an infix operator continuing the value. A `;` (which may end any `when` entry) in the
# indentation ends the entry.
_KOTLIN_WHEN_ELSE = re.compile(rb"(?m)(?<=[^{\n]\n)([ \t]*) (?=(?:else|!?in|!?is)\b[^\n]*->)")


def kotlin_retries(source: bytes) -> list[bytes]:
    return [_KOTLIN_WHEN_ELSE.sub(lambda m: m.group(1) + b";", source)]


# TypeScript: a call signature with its type parameters on their own lines (`<\n  S,\n>(r: R): S`) after a member
# with no separator; tree-sitter-typescript reads the `<` as type arguments of the member before. A `;` in the
# indentation separates the members.
_TS_SIGNATURE_AFTER_MEMBER = re.compile(rb"(?m)(?<=[\w>)\]]\n)([ \t]*) (?=<[ \t]*\n)")


def typescript_retries(source: bytes) -> list[bytes]:
    return [_TS_SIGNATURE_AFTER_MEMBER.sub(lambda m: m.group(1) + b";", source)]
