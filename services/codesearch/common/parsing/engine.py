"""The shared engine: one tree-sitter query per language captures definitions, scopes, calls and imports.

Capture conventions used by every language's query:
  @def.<kind>  a definition node (kind = function, method, class, struct, ...), with @name (and optional @owner:
               the type a method belongs to when it is declared outside it, e.g. Go receivers, C++ `A::f`)
  @scope       a node that qualifies the definitions inside it without being one (Rust `impl X`), with @name
  @call        a call node, with @callee (the called name) and optional @receiver
  @end         optional, in a definition's match: the node the definition ends with (Dart puts a function's body
               beside its signature, not inside it)
  @nocall      a node that looks like a call's callee but is not one (Elixir's `@attr value`): its call is dropped
  @import      an import node: with @module (the spec text, quotes stripped) and optional @alias when the
               language has no `imports` function, else handed to that function

Two rules serve languages whose definitions are calls or equations (Elixir `def f(x)`, Haskell and Erlang clauses):
a call whose callee is a definition's own name node is the definition's head, not a call; and, where the spec
says so, consecutive definitions of one name under one parent (`f 0 = ..; f n = ..`) are one definition.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypedDict

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from codesearch.common.parsing.macros import MacroTable, collect
from codesearch.common.parsing.model import CONTAINER_KINDS, CallSite, Definition, Extraction, ImportRef
from codesearch.common.parsing.repair import repair

MAX_AVG_LINE_BYTES = 1000  # average line longer than this means minified or generated: skip call extraction
MAX_CALL_BYTES = (
    4 << 20
)  # files larger than this keep definitions and imports only; calls would cost too much
MAX_RECEIVER_CHARS = 80  # receivers longer than this are whole expressions, useless for disambiguation
MAX_SIGNATURE_CHARS = 300  # a signature line longer than this is cut; it is shown, not parsed
QUERY_MATCH_LIMIT = 1 << 16  # in-progress matches tree-sitter keeps; default is plenty but be explicit

ImportFn = Callable[[Node, bytes], list[ImportRef]]


def text(node: Node | None, source: bytes) -> str:
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


@dataclass
class LanguageSpec:
    """How to extract one language: its grammar, its query and its import reader."""

    name: str
    load: Callable[[], object]  # returns the grammar's language (a pointer capsule or a tree_sitter.Language)
    query: str
    imports: ImportFn | None = None
    # Fixes a captured name (e.g. strip C++ qualifiers); returns (name, owner) where owner may be "".
    split_name: Callable[[str], tuple[str, str]] | None = None
    # False for docs and configuration (Markdown headings, YAML keys): their structure cuts chunks but they hold
    # no symbols a reader looks up, so the graph keeps the file without definitions.
    symbols: bool = True
    # Kinds whose direct function children are methods (Elixir and Haskell modules hold functions, not methods).
    method_parents: frozenset[str] = CONTAINER_KINDS
    # Each definition runs to the line before the next one (Dockerfile stages: FROM starts one, no node spans it).
    extend_to_next: bool = False
    # Consecutive definitions of one name under one parent are clauses of one (Elixir, Haskell, Erlang); elsewhere
    # they are overloads or a property's getter and setter, and stay apart.
    merge_clauses: bool = False
    # Same-length sources to parse again, in order, when the first parse has errors (the C-family preprocessor,
    # see preprocess.py): the first clean tree, else the one with the fewest errors, is kept; names and lines are
    # read from the original bytes.
    recover: Callable[[bytes], Iterable[bytes]] | None = None
    # The C preprocessor runs on this language's files: the project's attribute-like macros (macros.py) are
    # blanked before the recover candidates are made.
    preprocessed: bool = False
    _compiled: tuple[Language, Query] | None = field(default=None, init=False, repr=False)
    _local: threading.local = field(default_factory=threading.local, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def compiled(self) -> tuple[Language, Query]:
        with self._lock:
            if self._compiled is None:
                loaded = self.load()
                lang = loaded if isinstance(loaded, Language) else Language(loaded)
                self._compiled = (lang, Query(lang, self.query))
            return self._compiled

    def parser(self) -> Parser:
        # Parsers are not thread-safe; one per thread (extraction runs in asyncio.to_thread workers).
        p = getattr(self._local, "parser", None)
        if p is None:
            p = Parser(self.compiled()[0])
            self._local.parser = p
        return p


class SpecOptions(TypedDict, total=False):
    """LanguageSpec's optional fields, for the tables that pass a language's options on as keywords."""

    imports: ImportFn | None
    split_name: Callable[[str], tuple[str, str]] | None
    symbols: bool
    method_parents: frozenset[str]
    extend_to_next: bool
    merge_clauses: bool
    recover: Callable[[bytes], Iterable[bytes]] | None
    preprocessed: bool


def count_errors(root: Node) -> int:
    """ERROR and MISSING nodes, visiting only subtrees that contain errors. A leaf marked as holding an error is one
    too: tree-sitter-kotlin inserts a zero-width identifier that says has_error but not is_missing."""
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing or node.child_count == 0:
            count += 1
        for child in node.children:
            if child.has_error or child.is_missing:
                stack.append(child)
    return count


@dataclass(slots=True)
class _Open:
    start: int
    end: int
    qualified: str
    kind: str


def run(spec: LanguageSpec, path: str, source: bytes, macros: MacroTable | None = None) -> Extraction:
    """Parses `source` and applies the spec. Never raises on bad input: tree-sitter recovers from errors.

    `macros`: the project's macro table (macros.py), applied with the file's own to the recover candidates of a
    preprocessed language.
    """
    return run_tree(spec, path, source, best_parse(spec, source, macros)[0])


def best_parse(spec: LanguageSpec, source: bytes, macros: MacroTable | None = None) -> tuple[Tree, bytes]:
    """The tree with the fewest errors among the source's and its same-length candidates', and the bytes it
    parsed (names and lines are read from the original)."""
    tree = spec.parser().parse(source)
    kept = source
    if tree.root_node.has_error and spec.recover is not None:
        errors = count_errors(tree.root_node)
        tried = {source}
        base = source
        if spec.preprocessed:  # the project's macros and the file's own (`#define C(x) 0x##x##ULL` in a test)
            own = collect([source])
            base = (macros | own if macros else own).blank(source)
        for retry in spec.recover(base):
            if retry in tried:
                continue
            tried.add(retry)
            candidate = spec.parser().parse(retry)
            found = count_errors(candidate.root_node)
            if found < errors:
                tree, errors, kept = candidate, found, retry
            if errors == 0:
                break
        if errors and spec.preprocessed:  # the macro invocations around the errors left (repair.py)
            tree, errors, kept = repair(spec.parser().parse, kept, tree, errors, count_errors)
    return tree, kept


def _unquote(s: str) -> str:
    return s.strip().strip("'\"`<>")


def run_tree(spec: LanguageSpec, path: str, source: bytes, tree: Tree) -> Extraction:
    """Applies the spec's query to a parsed tree."""
    lang_query = spec.compiled()[1]
    root = tree.root_node
    out = Extraction(path=path, language=spec.name, error_count=count_errors(root), symbols=spec.symbols)
    n_lines = source.count(b"\n") + 1
    skip_calls = len(source) > MAX_CALL_BYTES or len(source) / n_lines > MAX_AVG_LINE_BYTES
    out.calls_skipped = skip_calls
    lines = source.split(b"\n")

    # (start_byte, -end_byte, order, payload) for defs and scopes; calls kept aside.
    items: list[tuple[int, int, int, str, str, str, Node, int, int]] = []
    calls: list[tuple[int, int, str, str]] = []
    call_callees: list[int] = []  # start byte of each call's callee node, parallel to calls
    name_starts: set[int] = set()  # start bytes of definition name nodes
    import_nodes: list[Node] = []
    cursor = QueryCursor(lang_query, match_limit=QUERY_MATCH_LIMIT)
    for pattern, caps in cursor.matches(root):
        for cap, nodes in caps.items():
            if cap.startswith("def.") or cap == "scope":
                node = nodes[0]
                name_nodes = caps.get("name")
                if not name_nodes:
                    break
                name = text(name_nodes[0], source)
                owner = text(caps["owner"][0], source) if "owner" in caps else ""
                if spec.split_name is not None:
                    name, extra_owner = spec.split_name(name)
                    owner = owner or extra_owner
                if not name:
                    break
                name_starts.add(name_nodes[0].start_byte)
                name_row = name_nodes[0].start_point[0]
                kind = "scope" if cap == "scope" else cap[4:]
                last = caps["end"][0] if "end" in caps else node
                end_byte, end_row = last.end_byte, last.end_point[0]
                if last.end_point[1] == 0 and end_row > last.start_point[0]:
                    end_row -= 1  # a node that takes its final newline (Make rules, Markdown sections)
                # The pattern index orders two patterns that matched one node: the one written first wins.
                items.append(
                    (node.start_byte, -end_byte, pattern, kind, name, owner, node, end_row, name_row)
                )
                break
            if cap == "call":
                if skip_calls:
                    break
                node = nodes[0]
                callee = caps.get("callee")
                if not callee:
                    break
                recv = caps.get("receiver")
                receiver = text(recv[0], source).rstrip(".") if recv else ""  # Haskell `M.f`: module "M."
                if len(receiver) > MAX_RECEIVER_CHARS or "\n" in receiver:
                    receiver = receiver[:MAX_RECEIVER_CHARS].split("\n", 1)[0]
                calls.append((node.start_byte, node.start_point[0] + 1, text(callee[-1], source), receiver))
                call_callees.append(callee[-1].start_byte)
                break
            if cap == "nocall":
                name_starts.add(nodes[0].start_byte)
                break
            if cap == "import":
                if spec.imports is not None:
                    import_nodes.append(nodes[0])
                elif "module" in caps:
                    alias = text(caps["alias"][0], source) if "alias" in caps else ""
                    line = nodes[0].start_point[0] + 1
                    out.imports.append(
                        ImportRef(module=_unquote(text(caps["module"][0], source)), line=line, alias=alias)
                    )
                break

    items.sort()
    stack: list[_Open] = []
    # Each def gets the innermost open def/scope as its parent.
    opened: list[_Open] = []  # defs (not scopes) in start order, for enclosing lookups of calls
    seen: set[tuple[int, int, str]] = set()
    last_child: dict[
        int, Definition
    ] = {}  # id of the enclosing open entry (or of None) -> its last definition
    for start, neg_end, _order, kind, name, owner, node, end_row, name_row in items:
        end = -neg_end
        while stack and stack[-1].end <= start:
            stack.pop()
        parent = stack[-1] if stack else None
        parent_q = parent.qualified if parent else ""
        if owner:
            parent_q = f"{parent_q}.{owner}" if parent_q and parent and parent.kind == "module" else owner
        qualified = f"{parent_q}.{name}" if parent_q else name
        key = (start, end, name)
        if key in seen:  # two patterns matched the same node: the first written wins
            continue
        seen.add(key)
        if kind == "scope":
            stack.append(_Open(start, end, qualified, "scope"))
            continue
        if kind == "function" and (
            owner or (parent is not None and parent.kind in spec.method_parents | {"scope"})
        ):
            kind = "method"
        row = node.start_point[0]
        entry = _Open(start, end, qualified, kind)
        previous = last_child.get(id(parent))
        if (
            spec.merge_clauses
            and previous is not None
            and previous.qualified_name == qualified
            and previous.kind == kind
        ):
            previous.end_line = max(previous.end_line, end_row + 1)  # another clause of the same definition
        else:
            sig = _signature(lines, row, name_row)
            definition = Definition(
                name=name,
                qualified_name=qualified,
                kind=kind,
                start_line=row + 1,
                end_line=end_row + 1,
                signature=sig[:MAX_SIGNATURE_CHARS],
                parent=parent_q,
            )
            out.definitions.append(definition)
            last_child[id(parent)] = definition
        stack.append(entry)
        opened.append(entry)

    if name_starts:  # a definition's head (Elixir `def f(x)`) is not a call of f
        calls = [c for c, at in zip(calls, call_callees, strict=True) if at not in name_starts]
    if spec.extend_to_next:
        _extend_to_next(out.definitions, n_lines - 1 if source.endswith(b"\n") else n_lines)
    if calls:
        calls.sort()
        out.calls = _enclose(calls, opened)
    if spec.imports is not None:
        for node in import_nodes:
            out.imports.extend(spec.imports(node, source))
    else:  # two patterns may read one statement (Lua `local x = require(..)` and `require(..)`): keep the richer
        kept: dict[tuple[int, str], ImportRef] = {}
        for imp in out.imports:
            if (imp.line, imp.module) not in kept or imp.alias:
                kept[(imp.line, imp.module)] = imp
        out.imports = list(kept.values())
    return out


ANNOTATION_PREFIXES = (b"@", b"[", b"#[")  # Kotlin/Java annotations, C# attributes, Rust attributes


def _signature(lines: list[bytes], row: int, name_row: int) -> str:
    """The definition's first line that is not an annotation (`@Override`, `[Flags]`), up to its name's line."""
    while row < name_row and row < len(lines) and lines[row].lstrip().startswith(ANNOTATION_PREFIXES):
        row += 1
    return lines[row].decode("utf-8", "replace").strip() if row < len(lines) else ""


def _extend_to_next(defs: list[Definition], n_lines: int) -> None:
    """Stretches each definition to the line before the next sibling (or the end of the file)."""
    for d, nxt in zip(defs, [*defs[1:], None], strict=True):
        d.end_line = max(d.end_line, (nxt.start_line - 1) if nxt is not None else n_lines)


def _enclose(calls: list[tuple[int, int, str, str]], defs: list[_Open]) -> list[CallSite]:
    """Attaches each call (sorted by byte) to the innermost definition containing it, by a sweep."""
    result: list[CallSite] = []
    stack: list[_Open] = []
    i = 0
    for pos, line, callee, receiver in calls:
        while i < len(defs) and defs[i].start <= pos:
            while stack and stack[-1].end <= defs[i].start:
                stack.pop()
            stack.append(defs[i])
            i += 1
        while stack and stack[-1].end <= pos:
            stack.pop()
        result.append(
            CallSite(
                callee=callee, receiver=receiver, line=line, enclosing=stack[-1].qualified if stack else ""
            )
        )
    return result
