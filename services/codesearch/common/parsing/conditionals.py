"""Which `#if` conditionals of a C-family file tree-sitter can read with every branch in place.

tree-sitter-c and tree-sitter-cpp parse `#if/#elif/#else` as nodes that hold statements, declarations or members.
A conditional whose branches each hold whole ones of those, standing where one may stand, parses with all its
branches; one whose branches each open half a statement (`if (a) {` / `if (b) {`, one `}` after) or stand inside
an expression (`f(a,\\n#if X\\n b,\\n#else\\n c,\\n#endif\\n d)`) does not, and the preprocess candidates keep only its
first branch (preprocess.keep_first_branches). Which is which is read from the brackets and the last code character
of each branch and of the code before the conditional, ignoring strings and comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(\w*)")
# What a code line holds besides brackets: strings, characters and comments, read over whole.
_SKIPPED = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//.*|/\*.*?\*/|(/\*)')
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


def _fold(branch: _Branch, depth: int, last: int) -> None:
    branch.depth += depth
    if last:
        branch.last = last


def whole_conditionals(lines: list[bytes]) -> set[int]:
    """Line numbers (0-based) of the `#if`s whose branches (two or more) may all stay: each closes what it opens
    and ends a whole statement or declaration, and the code before the conditional does too. A conditional nested in
    one counts as its first branch unless it may stay whole itself."""
    whole: set[int] = set()
    top = _Branch(ord(";"))  # the file's start stands where a declaration may
    stack: list[_Conditional] = []
    in_comment = continued = False
    for i, line in enumerate(lines):
        current = stack[-1].branches[-1] if stack else top
        if in_comment:
            end = line.find(b"*/")
            if end < 0:
                continue
            in_comment, line = False, line[end + 2 :]
            directive = None
        else:
            directive = None if continued else _DIRECTIVE.match(line)
        if continued or directive:
            word = directive.group(1) if directive else b""
            continued = line.endswith(b"\\")
            in_comment = _code_of(line)[1]  # `#endif /* A ||` continued on the next lines
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
                _fold(stack[-1].branches[-1] if stack else top, 0 if stays else first.depth, first.last)
            elif word:  # `#define`, `#include`, ...: a line of its own
                current.last = ord("#")
            continue
        code, in_comment = _code_of(line)
        if _MACRO_LINE.fullmatch(code):
            current.last = ord("#")
        elif code:
            _fold(current, _depth(code) if stack else 0, code[-1])
    return whole


def _depth(code: bytes) -> int:
    """Brackets the code opens minus those it closes."""
    opened = code.count(b"(") + code.count(b"[") + code.count(b"{")
    return opened - code.count(b")") - code.count(b"]") - code.count(b"}")


def _code_of(line: bytes) -> tuple[bytes, bool]:
    """The line without its strings, characters and comments (right-stripped), and whether it ends inside a block
    comment it opened."""
    parts, at = [], 0
    for m in _SKIPPED.finditer(line):
        parts.append(line[at : m.start()])
        at = m.end()
        if m.group(1) is not None:  # `/*` with no end here: the rest is comment
            return b"".join(parts).rstrip(), True
    parts.append(line[at:])
    return b"".join(parts).rstrip(), False
