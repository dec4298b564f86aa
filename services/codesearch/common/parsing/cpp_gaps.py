"""C++ forms tree-sitter-cpp 0.23.4 has no rule for, rewritten in place (same length, newlines kept); the second
candidate of preprocess.c_family_retries, made only when blanking the macros left a file broken."""

from __future__ import annotations

import re
from collections.abc import Callable

from codesearch.common.parsing.blanking import blank, blank_group, spaces, underscore_group

# C++ forms tree-sitter-cpp 0.23.4 (the newest release on PyPI, npm and crates.io) has no rule for, each rewritten
# in place to a form it has, where what is blanked declares nothing the graph keeps:
# - an explicit instantiation (`extern template class BigUnsigned<4>;`, `template Status F<0>(string_view);`):
#   it names a template defined elsewhere; blanked whole.
_EXPLICIT_INSTANTIATION = re.compile(rb"(?m)^[ \t]*(?:extern[ \t]+)?template[ \t]+(?=[A-Za-z_])[^;{}#]*;")
# - an unnamed parameter with a default (`template <class K, K* = nullptr>`, `const void* = nullptr`): it gets a
#   one-letter name, `_`, in the space before `=`.
_UNNAMED_DEFAULT = re.compile(rb"[*&](?<=[\w>)][*&])( )(?==[^=])")  # starts on `*`/`&`: a fast scan
# - `= delete` outside a class (`void swap(A&, A&) = delete;` on a line of its own at column 0): the declaration
#   stays, without it. Inside a class the grammar reads it, and the query keeps the deleted member.
_DELETED = re.compile(rb"(?m)^[^ \t\n][^\n]*\)[ \t]*(= delete);")
# - an enum with a base and no name (`enum : int32_t {`): the base is blanked, the enumerators stay.
_UNNAMED_ENUM_BASE = re.compile(rb"\benum( *: *[\w:]+)(?= *\{)")
# - `typename` in an expression (`T(typename T::tag_t{}, x)`, `typename slot_type::ctor()`,
#   `= typename std::conjunction<A, B>::value;`): blanked, the qualified name stays.
_EXPRESSION_TYPENAME = re.compile(
    rb"(?:[(,{=+]|return)\s*(typename)(?=\s[\w:]+(?:<(?:[^<>;]|<[^<>;]*>)*>)?::\s*\w+(?:\{|\(|\s*[;,)]))"
)
# - `using typename Base::x;`: the keyword is blanked.
_USING_TYPENAME = re.compile(rb"\busing (typename) ")
# - a brace default of a parameter (`std::vector<int> lines = {}`, `T t = {1}`): `{}` becomes `0 `, `{x}` `(x)`.
_BRACE_DEFAULT = re.compile(rb"(?<=[\w ] = )\{([^{}()\n;]*)\}(?=\s*[,)])")
# - a destructor called by name (`p->~T<>()`, `node->Node::~Node()`, `x.~T()`): the `~` is blanked.
_DESTRUCTOR_CALL = re.compile(rb"(?:\.|->)(?:\w+::)?(~)(?=\w)")
# - an operator called as a statement (`operator++();` in an iterator's postfix form).
_OPERATOR_STATEMENT = re.compile(rb"(?m)(?<=^)([ \t]+operator)(\+\+|--)(?=\(\);)")
# - a macro pasted to a string literal (`"%016" PRIx64 ", "`, `"node %" PRIu32, x`): no identifier may follow a
#   string literal in C or C++, so it can only be a macro that expands to one; blanked.
_STRING_MACRO = re.compile(rb'(?<=" )[A-Za-z_]\w*(?=[ \t]*["),])')
# - a pointer to member type (`int S::*`, `void (A::*)()`, `T C::*`): the class is blanked, a pointer stays.
_MEMBER_POINTER = re.compile(rb"(?<=[ (<,])[A-Za-z_]\w*::\*")
# - an operator called by name (`x.operator=(y)`, `p.operator->()`, `v.operator BitGenRef()`): the operator
#   becomes `_`s, an identifier of the same length (the call's name is read from the original bytes).
_OPERATOR_CALL = re.compile(rb"[.>]operator(->|=|\+\+|--|\*|\(\)| )(?=[(A-Za-z_:])")


# - a pointer-to-member access (`(obj->*F)(args)`, `(o.*pm)()`): the `*` is blanked, a member access stays.
_MEMBER_POINTER_ACCESS = re.compile(rb"(?:->|\.)(?<![0-9]\.)(\*)(?=[A-Za-z_(])")  # not `1.*x`
# - an unnamed bit-field (`uint8_t : 0;`): it gets the name `_` (` : 0;` becomes ` _:0;`).
_UNNAMED_BITFIELD = re.compile(rb"(?m)(?<=^)([ \t]+[\w:]+) : (\d+);")
# - a function type as a template argument's default (`typename Callback = void()`): its `()` is blanked.
_FUNCTION_TYPE_DEFAULT = re.compile(rb"(?<=[ \t]=[ \t])(?:void|bool|int)(\(\))(?=[ \t]*[,>])")
# - a reference initialized with parentheses (`const Transition& last(transitions_.back());`), which the grammar
#   takes for a function declaration: the parentheses become braces, an initializer it reads.
_PAREN_REFERENCE_INIT = re.compile(rb"(?m)^([ \t]+const [\w:<>]+& \w+)\(([^;()\n]*(?:\.|->)\w+\(\))\);$")


# - `__restrict` after a reference (`const P& __restrict p`; after `*` the grammar has it): blanked.
_REFERENCE_RESTRICT = re.compile(rb"&[ \t]*(__restrict__|__restrict)\b")
# - an operator called by name without a receiver (`return &operator*();`, `return operator<< <char>(v);`) or
#   specialized outside its class (`template <> L& L::operator<< <const wchar_t*>(..)`): the operator becomes
#   `_`s, an identifier of the same length, template arguments kept.
_BARE_OPERATOR_CALL = re.compile(
    rb"(?:(?<=[&(!])|(?<=return ))(operator(?:\*|->|<<|>>|\(\)))(?=\(| <)|(?<=::)(operator(?:<<|>>)) (?=<)"
)
# - a functional cast to a keyword type in an expression (`(unsigned(x[0]) << 18)`): the type word is blanked, the
#   parenthesized operand stays.
_KEYWORD_CAST = re.compile(
    rb"(?<=[(|&^+\-*/%=,~!] )(unsigned|signed|char|short|long)(?=\((?!\*))|(?<=\()(unsigned)(?=\()"
)
# - `= delete` on a template function with a return type (`template <typename T>\n  bool operator==(T&&) const =
#   delete;`), which the grammar reads as a delete expression: blanked, the declaration stays. Without a return type
#   it reads them (`template <typename T>\n  AlphaNum(std::initializer_list<T>) = delete;`): left alone.
_TEMPLATE_DELETED = re.compile(
    rb"(?m)(?<=>\n)[ \t]*[^\n;{}(]*[\w>*&] +[^\n;{}( ]+\([^\n;{}]*\)[ \t]*(?:const[ \t]*)?(= delete);"
)
# - a declaration as a `for` condition with no initializer (`for (; const char* dp = strchr(k, *p); ++p)`): the
#   `;` moves after it, so it reads as the initializer (the loop's locals are not kept).
_FOR_CONDITION_DECLARATION = re.compile(
    rb"\bfor \(;( (?:const )?[A-Za-z_][\w:]*(?:<[^;()]*>)?[ \t*&]+[A-Za-z_]\w* = [^;{}]*); "
)
# - an attribute between a variable and its initializer (`Factory f __attribute__((weak)) =`): blanked.
_ATTRIBUTE_BEFORE_INIT = re.compile(rb"(?<=\w )(__attribute__\(\((?:[^()\n]|\([^()\n]*\))*\)\))(?=[ \t]*=)")
# - a pack expansion of a using-declaration (`using T::operator()...;`): the `...` is blanked.
_USING_PACK = re.compile(rb"\busing [\w:]+::operator[^;\n]*?(\.\.\.);")
# - a register variable bound to a register (`register uintptr_t x30 __asm__("x30") = ptr;`): the binding blanked.
_REGISTER_ASM = re.compile(rb"\bregister [^;=\n]*?(__asm__\(\"[^\"\n]*\"\)|asm\(\"[^\"\n]*\"\))")
# - MSVC's inheritance keywords (`class __virtual_inheritance X : ...`): blanked.
_INHERITANCE_KEYWORD = re.compile(rb"(?<=class )(__(?:single|multiple|virtual)_inheritance) ")
# - an explicit object parameter (deducing `this`: `bool operator()(this const This&, Args...)`): `this` is blanked.
_EXPLICIT_THIS = re.compile(rb"[(,][ \t]*(this) (?=[A-Za-z_])")


def _underscore_operator(match: re.Match[bytes]) -> bytes:
    group = 1 if match.group(1) else 2
    return underscore_group(group)(match)


def _for_condition(match: re.Match[bytes]) -> bytes:
    # `for (; D; ++p)` -> `for (  D;;++p)`: the declaration keeps its offsets, the space before the update goes
    return b"for (  " + match.group(1)[1:] + b";;"


def _brace_default(match: re.Match[bytes]) -> bytes:
    inner = match.group(1)
    return b"(" + inner + b")" if inner.strip() else b"0" + spaces(inner) + b" "


def _blank_member_class(match: re.Match[bytes]) -> bytes:
    return spaces(match.group(0)[:-1]) + b"*"


_Rewrite = Callable[[re.Match[bytes]], bytes]

# Each rewrite with the words that must be in the source for its pattern to match (a cheap test that skips most
# passes on most files), in the order they run.
_REWRITES: tuple[tuple[tuple[bytes, ...], re.Pattern[bytes], _Rewrite], ...] = (
    ((b"template",), _EXPLICIT_INSTANTIATION, blank),
    ((b"= nullptr", b"= {}", b"* = ", b"& = "), _UNNAMED_DEFAULT, lambda m: m.group(0)[:-1] + b"_"),
    ((b"= delete",), _DELETED, blank_group(1)),
    ((b"enum",), _UNNAMED_ENUM_BASE, blank_group(1)),
    ((b"typename",), _EXPRESSION_TYPENAME, blank_group(1)),
    ((b"typename",), _USING_TYPENAME, blank_group(1)),
    ((b"= {",), _BRACE_DEFAULT, _brace_default),
    ((b"~",), _DESTRUCTOR_CALL, blank_group(1)),
    ((b'" ',), _STRING_MACRO, blank),
    ((b"::*",), _MEMBER_POINTER, _blank_member_class),
    ((b"->*", b".*"), _MEMBER_POINTER_ACCESS, blank_group(1)),
    ((b" : ",), _UNNAMED_BITFIELD, lambda m: m.group(1) + b" _:" + m.group(2) + b";"),
    ((b"= void()", b"= bool()", b"= int()"), _FUNCTION_TYPE_DEFAULT, blank_group(1)),
    ((b"& ",), _PAREN_REFERENCE_INIT, lambda m: m.group(1) + b"{" + m.group(2) + b"};"),
    ((b"__restrict",), _REFERENCE_RESTRICT, blank_group(1)),
    ((b"(",), _KEYWORD_CAST, blank),
    ((b"= delete",), _TEMPLATE_DELETED, blank_group(1)),
    ((b"for (;",), _FOR_CONDITION_DECLARATION, _for_condition),
    ((b"__attribute__",), _ATTRIBUTE_BEFORE_INIT, blank_group(1)),
    ((b"register ",), _REGISTER_ASM, blank_group(1)),
    ((b"_inheritance ",), _INHERITANCE_KEYWORD, blank_group(1)),
    ((b"this ",), _EXPLICIT_THIS, blank_group(1)),
    ((b"operator",), _BARE_OPERATOR_CALL, _underscore_operator),
    ((b"operator",), _USING_PACK, blank_group(1)),
    ((b"operator",), _OPERATOR_CALL, underscore_group(1)),
    ((b"operator",), _OPERATOR_STATEMENT, lambda m: m.group(1) + b"__"),
)


def rewrite_cpp_gaps(source: bytes) -> bytes:
    """The C++ forms above rewritten in place (same length, newlines kept); passes whose words are absent skipped."""
    for words, pattern, rewrite in _REWRITES:
        if any(word in source for word in words):
            source = pattern.sub(rewrite, source)
    return source
