"""Which `#if` conditionals of a C-family file may keep every branch in the preprocess candidates.

The candidates blank the conditional directives (preprocess.keep_first_branches). A conditional whose branches
each hold whole statements, declarations or members, standing where one may stand, then reads as its branches one
after the other (two definitions of `init`, as tree-sitter reads them in a file it parses clean); one whose branches
each open half a statement (`if (a) {` / `if (b) {`, one `}` after) or stand inside an expression
(`f(a,\\n#if X\\n b,\\n#else\\n c,\\n#endif\\n d)`) does not, and keeps only its first branch. Which is which is read
from the brackets and the last code character of each branch and of the code before the conditional, strings and
comments left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codesearch.common.parsing.blanking import blank

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w*)")
# Strings, characters and comments: blanked before the brackets and last characters are read.
_SKIPPED = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', re.S)
# The last code character before a conditional, or of a branch, when it ends a statement, a declaration, a block or
# an access label (or `#` for a directive, e.g. a `#define`): the conditional stands between whole ones.
_WHOLE_ENDS = frozenset(b";{}:#")
# A macro alone on its line (`ABSL_NAMESPACE_BEGIN`, `CURL_EXTERN_C_END()`) stands between declarations too: the
# preprocess candidates blank it (preprocess.blank_macros); it counts as a directive.
_MACRO_LINE = re.compile(rb"[ \t]*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[ \t]*(?:\([^()]*\))?")


@dataclass
class _Branch:
    last: int  # last code character (the one before the conditional while the branch holds none)
    depth: int = 0  # brackets opened minus closed


@dataclass
class _Conditional:
    line: int  # of its `#if`
    before: int  # last code character before it
    branches: list[_Branch] = field(default_factory=list)


def whole_conditionals(source: bytes) -> set[int]:
    """Line numbers (0-based) of the `#if`s whose branches (two or more) may all stay: each closes what it opens
    and ends a whole statement or declaration, and the code before the conditional does too. A conditional nested in
    one counts as its first branch unless it may stay whole itself."""
    whole: set[int] = set()
    top = _Branch(ord(";"))  # the file's start stands where a declaration may
    stack: list[_Conditional] = []
    continued = False  # the previous line was a directive ending in a backslash
    for i, line in enumerate(_SKIPPED.sub(blank, source).split(b"\n")):
        current = stack[-1].branches[-1] if stack else top
        directive = None if continued else _DIRECTIVE.match(line)
        if continued or directive:
            word = directive.group(1) if directive else b""
            continued = line.endswith(b"\\")
            if word in (b"if", b"ifdef", b"ifndef"):
                stack.append(_Conditional(i, current.last, [_Branch(current.last)]))
            elif word in (b"elif", b"else", b"elifdef", b"elifndef") and stack:
                stack[-1].branches.append(_Branch(stack[-1].before))
            elif word == b"endif" and stack:
                done = stack.pop()
                first = done.branches[0]
                stays = (
                    len(done.branches) > 1
                    and done.before in _WHOLE_ENDS
                    and all(b.depth == 0 and b.last in _WHOLE_ENDS for b in done.branches)
                )
                if stays:
                    whole.add(done.line)
                parent = stack[-1].branches[-1] if stack else top
                parent.depth += 0 if stays else first.depth
                parent.last = first.last
            elif word:  # `#define`, `#include`, ...: a line of its own
                current.last = ord("#")
            continue
        code = line.rstrip()
        if not code:
            continue
        if _MACRO_LINE.fullmatch(code):
            current.last = ord("#")
            continue
        current.last = code[-1]
        if stack:  # brackets matter inside a conditional only
            current.depth += code.count(b"(") + code.count(b"[") + code.count(b"{")
            current.depth -= code.count(b")") + code.count(b"]") + code.count(b"}")
    return whole
