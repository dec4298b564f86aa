"""What the extractors produce: definitions, call sites and imports of one file."""

from __future__ import annotations

from dataclasses import dataclass, field

# Kinds that can hold methods: a function directly inside one of these is a method.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "module"})


@dataclass(slots=True)
class Definition:
    """A named definition; lines are 1-based and inclusive, start_line is the signature line."""

    name: str
    qualified_name: str
    kind: str  # a SymbolKind name in lower case: function, method, class, struct, ...
    start_line: int
    end_line: int
    signature: str
    parent: str = ""  # qualified name of the enclosing definition, or ""


@dataclass(slots=True)
class CallSite:
    """A call: the name called, the receiver expression text ("self", "os.path") and where."""

    callee: str
    receiver: str
    line: int
    enclosing: str = ""  # qualified name of the innermost enclosing definition, or ""


@dataclass(slots=True)
class ImportRef:
    """One import statement (or include / require / use / mod)."""

    module: str  # the module or spec text as written ("email.utils", "./util", "stdio.h", "crate::a::b")
    line: int
    names: list[str] = field(default_factory=list)  # names imported from it ("from m import a, b")
    level: int = 0  # Python relative import dots
    alias: str = ""  # local name bound to the module itself ("import numpy as np" -> "np")
    aliases: list[str] = field(default_factory=list)  # local name per entry of names ("" when not renamed)
    kind: str = ""  # language-specific flavour: "mod" (Rust mod x;), "require_relative", "system" (C <>) ...


@dataclass(slots=True)
class Extraction:
    """Everything extracted from one file."""

    path: str
    language: str
    definitions: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportRef] = field(default_factory=list)
    error_count: int = 0  # tree-sitter ERROR and MISSING nodes
    module: str = ""  # dotted module path for Python files ("email.utils"), else ""
    calls_skipped: bool = False  # true when the file looked minified and call extraction was skipped
    symbols: bool = True  # false for docs/config: definitions only cut chunks, the graph does not keep them
