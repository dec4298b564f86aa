"""Error-located repair of C-family parses: the macro invocations around the errors left, blanked in place.

A function-like macro's arguments need not be code: `ABSL_INTERNAL_X(insert_or_assign, .., const &, const &)`,
`COMPOP(>, <, LogSeverityAtLeast)`, `EXPECT_THROW(ThrowingValue<> bomb, E)`, `MATCHER_P(IsNode, h, "a" + b) {`
are token lists the preprocessor pastes into code the source does not hold. After the preprocess candidates
(preprocess.c_family_retries), each ERROR or MISSING node left in the tree is looked up in the source: the
innermost invocation of a name that reads as a macro (upper case with `_`, or 3+ upper-case letters) that holds
it, ends right before it or starts right after it, and the invocations lying whole inside a short ERROR, get
their arguments blanked (same length, newlines kept; the name and the parentheses stay, so `M(..);` reads as a
call statement and `M(..) {` at file level as a function with its body). Where that was not enough, the next
round blanks the whole invocation (a file-level `COMPOP(..)` without `;` expands to declarations; `M(..) {` in a
function body is a block, not a nested function, and is blanked whole at once). Before the rounds, `#define`s
written inside an expression are blanked. Each round is kept only if the errors fall, and the result only if it
has fewer than the tree given. Nothing here names a project's macros: the errors point at them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator

from tree_sitter import Node, Tree

from codesearch.common.parsing.blanking import directive_spans, inside, spaces

# Rounds of repair after the candidates: each blanks the next stage or the next enclosing invocation of the errors
# left. abseil-cpp's C++ files with errors after 0/1/2/3/4/6 rounds: 31, 16, 10, 9, 9, 9 (note of issue 18).
MAX_REPAIR_ROUNDS = 3
# An invocation this far (bytes) before an error cannot hold it in practice; the search stops there.
MAX_INVOCATION_REACH = 8192
# An ERROR this long (bytes) holds whole declarations, not a run of invocations read as one: those inside it are
# left alone (the ones around its own start and end are still looked up).
MAX_ERROR_SPAN = 2048
# Errors looked up per round: a file lost from its first line has hundreds, and the first ones lead.
MAX_ERRORS_PER_ROUND = 64

_MACRO_CALL = re.compile(rb"(?<![\w.>:])(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z]{3,}[A-Z0-9]*)[ \t]*\(")
# What the parenthesis matcher steps over whole: strings, characters, comments (an `)` inside one is not code).
_SKIPPED = rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/'
_PAREN_TOKENS = re.compile(rb"[()]|" + _SKIPPED, re.S)
# What may stand between an invocation and its error: blanks and comments. Each alternative matches one way only
# (a line comment runs to its line's end, a block comment to its first `*/`), so a failed fullmatch is linear: the
# ambiguous `(?:\s|//[^\n]*|/\*.*?\*/)*` backtracked exponentially over a run of comments (gRPC's event_engine.h).
_GAP = re.compile(rb"(?:\s|//[^\n]*(?![^\n])|/\*(?:[^*]|\*(?!/))*\*/)*")
_BODY_AFTER = re.compile(rb"\s*\{")  # an invocation followed by a block
_DEFINE_OR_UNDEF = re.compile(rb"[ \t]*#[ \t]*(?:define|undef)\b")
_EXPRESSION_ENDS = (b",", b"(", b")", b"=", b"= {", b"={", b"return")


def error_nodes(root: Node, limit: int) -> list[Node]:
    """The first `limit` ERROR and MISSING nodes of the tree, in source order, with those inside an ERROR (one that
    holds a whole file from its first declaration on starts far from what derailed it; the ones inside are near)."""
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
        stack.extend(child for child in reversed(node.children) if child.has_error or child.is_missing)
    found.sort(key=lambda n: n.start_byte)
    return found[:limit]


def _closing(source: bytes, open_at: int) -> int:
    """The offset just after the `)` that closes the `(` at `open_at`, or -1 when it does not close."""
    depth = 0
    for token in _PAREN_TOKENS.finditer(source, open_at):
        char = token.group(0)
        if char == b"(":
            depth += 1
        elif char == b")":
            depth -= 1
            if depth == 0:
                return token.end()
    return -1


class _Invocations:
    """The macro-looking invocations of one source outside `#` directives, found lazily around an offset."""

    def __init__(self, source: bytes, directives: list[tuple[int, int]]) -> None:
        """`directives`: (start, end) of each `#` line of `source` with its continuation lines."""
        self.source = source
        self.opens: list[int] = []  # offset of each invocation's `(`
        self.names: list[int] = []  # offset of its name
        for match in _MACRO_CALL.finditer(source):
            if inside(directives, match.start()):
                continue  # a `#define` body is not parsed as code
            self.names.append(match.start())
            self.opens.append(match.end() - 1)
        self._closes: dict[int, int] = {}

    def close_of(self, open_at: int) -> int:
        if open_at not in self._closes:
            self._closes[open_at] = _closing(self.source, open_at)
        return self._closes[open_at]

    def inside(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """The invocations that lie whole in an ERROR from `start` to `end` (`{ TYPES(A) TYPES(B) }`, calls that
        expand to lists read as one run of tokens), outermost first."""
        i = bisect.bisect_left(self.names, start)
        reached = start
        while i < len(self.names) and self.names[i] < end:
            name_at, open_at = self.names[i], self.opens[i]
            i += 1
            close = self.close_of(open_at)
            if name_at >= reached and 0 < close <= end:
                reached = close
                yield name_at, open_at, close

    def around(self, at: int, end: int) -> Iterator[tuple[int, int, int]]:
        """The invocations around an error from `at` to `end`: the one starting right after it (only blanks between:
        `= 0 REPLICATE(COUNT, _, _);`), then those that hold `at` (from the name to the `)`) or end right before
        it, innermost first: the offsets of each one's name, `(` and after its `)`."""
        j = bisect.bisect_left(self.names, end)
        if j < len(self.names) and _GAP.fullmatch(self.source, end, self.names[j]):
            close = self.close_of(self.opens[j])
            if close > 0:
                yield self.names[j], self.opens[j], close
        i = bisect.bisect_right(self.names, at) - 1  # an error may start on the name (`COMPOP(>, <, X)`)
        while i >= 0 and at - self.names[i] <= MAX_INVOCATION_REACH:
            name_at, open_at = self.names[i], self.opens[i]
            i -= 1
            close = self.close_of(open_at)
            if close > at or (close > 0 and _GAP.fullmatch(self.source, close, max(close, at))):
                yield name_at, open_at, close


def _expression_directives(source: bytes, directives: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The `#define`s and `#undef`s written inside an expression (`= {\n#define A(T) F<T>(),\n  TYPES(A)\n#undef A`,
    `return\n#define C(c) ...`): the code before them, past blank lines, comments and other directives, ends in
    `,`, `(`, `)`, `=`, `= {` or `return`. The grammar has no place for a directive there; the preprocessor reads it
    before the code, so the expression around it is whole without it."""
    found = []
    starts = [start for start, _ in directives]
    for start, end in directives:
        if not _DEFINE_OR_UNDEF.match(source, start):
            continue
        at = start
        while at > 0:  # back over blank lines, line comments and directives to the code line before
            line_start = source.rfind(b"\n", 0, at - 1) + 1
            i = bisect.bisect_right(starts, line_start) - 1
            if (
                i >= 0 and line_start < directives[i][1]
            ):  # a directive's line or one of its continuation lines
                at = directives[i][0]
                continue
            code = source[line_start : at - 1].split(b"//", 1)[0].rstrip()
            at = line_start
            if code.strip():
                if code.endswith(_EXPRESSION_ENDS):
                    found.append((start, end))
                break
    return found


def _blanked(source: bytes | bytearray, spans: Iterable[tuple[int, int]]) -> bytearray:
    out = bytearray(source)
    for start, end in spans:
        out[start:end] = spaces(bytes(out[start:end]))
    return out


def _in_function_body(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "compound_statement":
            return True
        parent = parent.parent
    return False


def _add_stage(
    spans: dict[int, tuple[int, int]],
    tried: dict[int, int],
    invocation: tuple[int, int, int],
    in_body: bool,
    source: bytes,
) -> bool:
    """Adds the invocation's next stage to this round's spans: its arguments, else the whole of it. False when it
    is in the round already or was tried whole."""
    name_at, open_at, close = invocation
    stage = tried.get(open_at, 0)
    if stage == 0 and in_body and _BODY_AFTER.match(source, close):
        stage = tried[open_at] = 1  # `HASH_FOR_EACH(y, x) {` in a body: a block, not a nested function
    if open_at in spans or stage >= 2:
        return False
    spans[open_at] = (open_at + 1, close - 1) if stage == 0 else (name_at, close)
    return True


def repair(
    parse: Callable[[bytes], Tree], source: bytes, tree: Tree, errors: int, count: Callable[[Node], int]
) -> tuple[Tree, int, bytes]:
    """The tree with the fewest errors after blanking the directives inside expressions, then, round by round, the
    arguments (or the whole) of the innermost invocations around the errors; the tree given when none has fewer.
    Returns the tree, its error count and the bytes it parsed."""
    directives = directive_spans(source)
    current, best_tree, best_errors = bytearray(source), tree, errors
    inside = _expression_directives(source, directives)
    if (
        inside
    ):  # first, and kept unless it adds errors: the invocations around them may parse once they are gone
        candidate = _blanked(current, inside)
        repaired = parse(bytes(candidate))
        found_errors = count(repaired.root_node)
        if found_errors <= best_errors:
            best_tree, best_errors, current = repaired, found_errors, candidate
            directives = [span for span in directives if span not in inside]
    invocations = _Invocations(bytes(current), directives)
    tried: dict[
        int, int
    ] = {}  # `(` offset -> the stage tried: 1 its arguments blanked, 2 the whole invocation
    for _ in range(MAX_REPAIR_ROUNDS if invocations.opens and best_errors else 0):
        spans: dict[int, tuple[int, int]] = {}  # `(` offset -> (first byte blanked, end)
        for node in error_nodes(best_tree.root_node, MAX_ERRORS_PER_ROUND):
            in_body = _in_function_body(node)
            for invocation in invocations.around(node.start_byte, node.end_byte):
                if _add_stage(spans, tried, invocation, in_body, invocations.source):
                    break  # the innermost not yet tried whole; the ones further out wait for the next round
            if node.is_error and node.end_byte - node.start_byte <= MAX_ERROR_SPAN:
                for invocation in invocations.inside(node.start_byte, node.end_byte):
                    _add_stage(spans, tried, invocation, in_body, invocations.source)
        if not spans:
            break
        for open_at in spans:
            tried[open_at] = tried.get(open_at, 0) + 1
        candidate = _blanked(current, spans.values())
        repaired = parse(bytes(candidate))
        found_errors = count(repaired.root_node)
        if found_errors < best_errors:
            best_tree, best_errors, current = repaired, found_errors, candidate
            if best_errors == 0:
                break
    if best_errors < errors:
        return best_tree, best_errors, bytes(current)
    return tree, errors, source
