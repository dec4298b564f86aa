"""The shared engine: one tree-sitter query per language captures definitions, scopes, calls and imports.

Capture conventions used by every language module's query:
  @def.<kind>  a definition node (kind = function, method, class, struct, ...), with @name (and optional @owner:
               the type a method belongs to when it is declared outside it, e.g. Go receivers, C++ `A::f`)
  @scope       a node that qualifies the definitions inside it without being one (Rust `impl X`), with @name
  @call        a call node, with @callee (the called name) and optional @receiver
  @import      an import node, handed to the language module's `imports` function
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from codesearch.graph.extract.model import CONTAINER_KINDS, CallSite, Definition, Extraction, ImportRef

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
    load: Callable[[], object]  # returns the grammar's language pointer
    query: str
    imports: ImportFn | None = None
    # Fixes a captured name (e.g. strip C++ qualifiers); returns (name, owner) where owner may be "".
    split_name: Callable[[str], tuple[str, str]] | None = None
    _compiled: tuple[Language, Query] | None = field(default=None, init=False, repr=False)
    _local: threading.local = field(default_factory=threading.local, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def compiled(self) -> tuple[Language, Query]:
        with self._lock:
            if self._compiled is None:
                lang = Language(self.load())
                self._compiled = (lang, Query(lang, self.query))
            return self._compiled

    def parser(self) -> Parser:
        # Parsers are not thread-safe; one per thread (extraction runs in asyncio.to_thread workers).
        p = getattr(self._local, "parser", None)
        if p is None:
            p = Parser(self.compiled()[0])
            self._local.parser = p
        return p


def count_errors(root: Node) -> int:
    """ERROR and MISSING nodes, visiting only subtrees that contain errors."""
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
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


def run(spec: LanguageSpec, path: str, source: bytes) -> Extraction:
    """Parses `source` and applies the spec. Never raises on bad input: tree-sitter recovers from errors."""
    lang_query = spec.compiled()[1]
    tree = spec.parser().parse(source)
    root = tree.root_node
    out = Extraction(path=path, language=spec.name, error_count=count_errors(root))
    n_lines = source.count(b"\n") + 1
    skip_calls = len(source) > MAX_CALL_BYTES or len(source) / n_lines > MAX_AVG_LINE_BYTES
    out.calls_skipped = skip_calls
    lines = source.split(b"\n")

    # (start_byte, -end_byte, order, payload) for defs and scopes; calls kept aside.
    items: list[tuple[int, int, int, str, str, str, Node]] = []
    calls: list[tuple[int, int, str, str]] = []
    import_nodes: list[Node] = []
    cursor = QueryCursor(lang_query, match_limit=QUERY_MATCH_LIMIT)
    for _pattern, caps in cursor.matches(root):
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
                kind = "scope" if cap == "scope" else cap[4:]
                items.append((node.start_byte, -node.end_byte, len(items), kind, name, owner, node))
                break
            if cap == "call":
                if skip_calls:
                    break
                node = nodes[0]
                callee = caps.get("callee")
                if not callee:
                    break
                recv = caps.get("receiver")
                receiver = text(recv[0], source) if recv else ""
                if len(receiver) > MAX_RECEIVER_CHARS or "\n" in receiver:
                    receiver = receiver[:MAX_RECEIVER_CHARS].split("\n", 1)[0]
                calls.append((node.start_byte, node.start_point[0] + 1, text(callee[-1], source), receiver))
                break
            if cap == "import":
                import_nodes.append(nodes[0])
                break

    items.sort()
    stack: list[_Open] = []
    # Each def gets the innermost open def/scope as its parent.
    opened: list[_Open] = []  # defs (not scopes) in start order, for enclosing lookups of calls
    seen: set[tuple[int, str]] = set()
    for start, neg_end, _order, kind, name, owner, node in items:
        end = -neg_end
        while stack and stack[-1].end <= start:
            stack.pop()
        parent = stack[-1] if stack else None
        parent_q = parent.qualified if parent else ""
        if owner:
            parent_q = f"{parent_q}.{owner}" if parent_q and parent and parent.kind == "module" else owner
        qualified = f"{parent_q}.{name}" if parent_q else name
        key = (start, qualified)
        if key in seen:  # two patterns matched the same node
            continue
        seen.add(key)
        if kind == "scope":
            stack.append(_Open(start, end, qualified, "scope"))
            continue
        if kind == "function" and (
            owner or (parent is not None and parent.kind in CONTAINER_KINDS | {"scope"})
        ):
            kind = "method"
        row = node.start_point[0]
        sig = lines[row].decode("utf-8", "replace").strip() if row < len(lines) else ""
        out.definitions.append(
            Definition(
                name=name,
                qualified_name=qualified,
                kind=kind,
                start_line=row + 1,
                end_line=node.end_point[0] + 1,
                signature=sig[:MAX_SIGNATURE_CHARS],
                parent=parent_q,
            )
        )
        entry = _Open(start, end, qualified, kind)
        stack.append(entry)
        opened.append(entry)

    if calls:
        calls.sort()
        out.calls = _enclose(calls, opened)
    if spec.imports is not None:
        for node in import_nodes:
            out.imports.extend(spec.imports(node, source))
    return out


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
