"""A project's own attribute-like macros, read from its `#define`s, so a parse can see past them.

tree-sitter does not run the preprocessor, so a macro that expands to an attribute or to nothing
(`ABSL_GUARDED_BY(mu)`, `absl_nullable`, `ABSL_PER_THREAD_TLS_KEYWORD`, `CONSTEXPR_M`) stands where the grammar
expects a declarator and breaks the statement around it. The project says what each macro is: collect() reads
every `#define` of the project's headers and keeps the names whose every definition (across `#if` branches) is
empty or made of attributes, qualifiers and other such macros, and at least one is not empty: a macro that is
only ever empty is a feature flag, an include guard or a stub for a function compiled out
(`#define Curl_altsvc_cleanup(x)` beside the real `void Curl_altsvc_cleanup(...)`), not an attribute. MacroTable.blank() then replaces their uses (with
their arguments, for function-like ones) by spaces, newlines kept, so offsets and lines stay valid. It is a data
table, not a list of names: what it blanks is what the repository itself defines as nothing but an attribute.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from codesearch.common.parsing.blanking import directive_spans, inside, spaces

_DEFINE = re.compile(rb"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\()?((?:[^\n\\]|\\.|\\\n)*)")
_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)
_PARAMS = re.compile(rb"[^)]*\)")  # a function-like macro's parameter list, after its `(`
_BALANCED = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"  # arguments, two levels of nested parentheses
# What an attribute-like body may hold: attributes, declaration qualifiers and storage keywords. Each expands to
# nothing the graph reads (no name, no call, no type a definition needs).
_ATTRIBUTE_TOKEN = re.compile(
    rb"\s*(?:__attribute__\s*\(" + _BALANCED + rb"\)|\[\[[^\[\]]*\]\]|__declspec\s*\([^()]*\)"
    rb"|alignas\s*\([^()]*\)"
    rb"|(?:_Nullable|_Nonnull|_Null_unspecified|__restrict__|__restrict|__thread|thread_local|constexpr|inline"
    rb"|__inline__|__inline|__forceinline|noexcept|volatile|const|constinit|consteval|static)\b)"
)
# A body that heads the block written after the use (`#define ABSL_INTERNAL_TRY try` / `if (true)`,
# `ABSL_INTERNAL_CATCH_ANY catch (...)` / `else if (false)`): blanked, the blocks read as compound statements and
# keep their calls; the macro adds no name. Not a whole statement (curl's `#define Curl_nop_stmt do {} while(0)`
# stands for functions compiled out, whose real definitions must stay).
_STATEMENT_HEAD = re.compile(rb"try|catch\s*\([^()]*\)|(?:else\s+)?if\s*\([^()]*\)")
_NAME = re.compile(rb"\s*([A-Za-z_]\w*)\s*(?:" + _BALANCED + rb")?")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_STRING_BODY = re.compile(rb'"(?:[^"\\\n]|\\.)*"')  # `#define ABSL_XPACLRI_HINT "hint #0x7;"`
_PASTE_BODY = re.compile(rb"\w*(?:\s*##\s*\w+)+")  # `0x##x##ULL`, `Elf64_##x`
_FORWARD_BODY = re.compile(rb"([A-Za-z_]\w*)\(\s*\w+\s*\)")  # `__ElfN(x)`
# A name that reads as a macro (`ABSL_GUARDED_BY`, `absl_nullable`, `CONSTEXPR_M`, `NOMINMAX`): a test file's
# `#define x` or `#define inline` must not blank every `x` of the project.
_MACRO_NAME = re.compile(rb"[A-Za-z]\w*_\w*|[A-Z][A-Z0-9]{2,}")


def _attribute_like(body: bytes, known: set[bytes]) -> bool:
    """Whether a macro body is empty or only attributes, qualifiers and names already known to be such macros, or
    the head of a statement whose block follows the use (see _STATEMENT_HEAD)."""
    if _STATEMENT_HEAD.fullmatch(body):
        return True
    at = 0
    while body[at:].strip():
        token = _ATTRIBUTE_TOKEN.match(body, at)
        if token is None:
            token = _NAME.match(body, at)
            if token is None or token.group(1) not in known:
                return False
        at = token.end()
    return True


@dataclass(frozen=True)
class MacroTable:
    """The project's macros a parse can see past: attribute-like `objects` (standalone) and `functions` (with
    arguments) are blanked; `pastes` build one identifier from their argument (`#define ElfW(x) __ElfN(x)`,
    `#define C(x) 0x##x##ULL`), so `ElfW(Sym)` becomes the identifier `ElfW_Sym_`, a type or a value as the
    place needs, where the grammar cannot read a call."""

    objects: frozenset[bytes] = frozenset()
    functions: frozenset[bytes] = frozenset()
    pastes: frozenset[bytes] = frozenset()
    strings: frozenset[bytes] = frozenset()  # object-like, every definition one string literal

    def __bool__(self) -> bool:
        return bool(self.objects or self.functions or self.pastes or self.strings)

    def __or__(self, other: MacroTable) -> MacroTable:
        return MacroTable(
            self.objects | other.objects,
            self.functions | other.functions,
            self.pastes | other.pastes,
            self.strings | other.strings,
        )

    def blank(self, source: bytes) -> bytes:
        """`source` with every use of a table macro (outside `#` lines) replaced in place, newlines kept."""
        present = frozenset(_IDENTIFIER.findall(source)).intersection(
            self.objects | self.functions | self.pastes | self.strings
        )
        if not present:
            return source
        directives = directive_spans(source)

        def replace_outside_directives(match: re.Match[bytes]) -> bytes:
            # a `#define` body keeps its macros (a blanked continuation line ends the directive early)
            if inside(directives, match.start()):
                return match.group(0)
            paste = match.groupdict().get("paste")
            if paste:  # `ElfW(Sym)` -> `ElfW_Sym_`
                return paste + b"_" + match.group("word") + b"_"
            if match.groupdict().get(
                "string"
            ):  # `asm(ABSL_XPACLRI_HINT : ..)` -> `asm("_______________" : ..)`
                return b'"' + b"_" * (len(match.group(0)) - 2) + b'"'
            return spaces(match.group(0))

        return self._pattern(present).sub(replace_outside_directives, source)

    def _pattern(self, present: frozenset[bytes]) -> re.Pattern[bytes]:
        alternatives = []
        pastes = sorted(present & self.pastes, key=len, reverse=True)
        functions = sorted(present & self.functions, key=len, reverse=True)
        objects = sorted(present & self.objects, key=len, reverse=True)
        if pastes:
            alternatives.append(rb"(?P<paste>" + b"|".join(map(re.escape, pastes)) + rb")\((?P<word>\w+)\)")
        if functions:  # longest first, so `ABSL_X_Y` is not read as `ABSL_X`
            alternatives.append(b"(?:" + b"|".join(map(re.escape, functions)) + rb")\s*" + _BALANCED)
        if objects:
            alternatives.append(b"(?:" + b"|".join(map(re.escape, objects)) + rb")\b")
        strings = sorted(present & self.strings, key=len, reverse=True)
        if strings:
            alternatives.append(b"(?P<string>" + b"|".join(map(re.escape, strings)) + rb")\b")
        # A word boundary on both sides; re's own cache keeps the pattern for files that use the same macros.
        return re.compile(rb"(?<![\w#])(?:" + b"|".join(alternatives) + b")")


def _paste_like(body: bytes, pastes: set[bytes], defined: dict[bytes, list[tuple[bool, bytes]]]) -> bool:
    """A body that makes one token of its argument: a paste (`0x##x##ULL`), or a one-argument call of a paste or
    of a reserved-name (`__`) macro the project does not define (`__ElfN(x)`, from the system's <link.h>; not
    `_fileno(x)`, a function)."""
    if _PASTE_BODY.fullmatch(body):
        return True
    call = _FORWARD_BODY.fullmatch(body)
    if call is None:
        return False
    callee = call.group(1)
    return callee in pastes or (callee.startswith(b"__") and callee not in defined)


def collect(sources: Iterable[bytes]) -> MacroTable:
    """The attribute-like and pasting macros the given files define (a project's headers, or one file)."""
    definitions: dict[bytes, list[tuple[bool, bytes]]] = {}
    for source in sources:
        if b"define" not in source:
            continue
        for m in _DEFINE.finditer(source):
            rest = m.group(3)
            function_like = m.group(2) is not None
            if function_like:
                params = _PARAMS.match(rest)
                if params is None:
                    continue
                rest = rest[params.end() :]
            body = _COMMENT.sub(b" ", rest.replace(b"\\\n", b" ")).strip()
            definitions.setdefault(m.group(1), []).append((function_like, body))
    known: set[bytes] = set()
    pastes: set[bytes] = set()
    grew = True
    while grew:  # a macro defined as other such macros (`#define A B C`) joins once they are known
        grew = False
        for name, bodies in definitions.items():
            texts = [body for _, body in bodies]
            attribute = _MACRO_NAME.fullmatch(name) and any(texts)
            if name not in known and attribute and all(_attribute_like(body, known) for body in texts):
                known.add(name)
                grew = True
            function_like = all(function_like for function_like, _ in bodies)
            if (
                name not in pastes
                and function_like
                and all(_paste_like(b, pastes, definitions) for b in texts)
            ):
                pastes.add(name)
                grew = True
    strings = {
        name
        for name, bodies in definitions.items()
        if _MACRO_NAME.fullmatch(name) and all(not f and _STRING_BODY.fullmatch(b) for f, b in bodies)
    }
    functions = {name for name in known if all(function_like for function_like, _ in definitions[name])}
    objects = {name for name in known if not any(function_like for function_like, _ in definitions[name])}
    return MacroTable(
        objects=frozenset(objects),
        functions=frozenset(functions),
        pastes=frozenset(pastes),
        strings=frozenset(strings),
    )
