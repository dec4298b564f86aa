"""JavaScript, TypeScript and TSX: functions, classes, methods, interfaces, enums, type aliases, calls, imports."""

from __future__ import annotations

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef
from codesearch.common.parsing.preprocess import typescript_retries

_COMMON = r"""
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(call_expression function: (identifier) @callee) @call
(call_expression function: (member_expression object: (_) @receiver property: (_) @callee)) @call
(new_expression constructor: (identifier) @callee) @call
(import_statement) @import
(call_expression function: (identifier) @_req (#eq? @_req "require") arguments: (arguments (string))) @import
"""

_TS_EXTRA = r"""
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(type_alias_declaration name: (_) @name) @def.type_alias
(internal_module name: (_) @name) @def.module
(function_signature name: (identifier) @name) @def.function
(abstract_method_signature name: (_) @name) @def.method
"""


def _unquote(s: str) -> str:
    return s.strip().strip("'\"`")


def imports(node: Node, source: bytes) -> list[ImportRef]:
    line = node.start_point[0] + 1
    if node.type == "call_expression":  # require("x")
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        return [ImportRef(module=_unquote(text(first, source)), line=line, kind="require")] if first else []
    src = node.child_by_field_name("source")
    if src is None:
        return []
    ref = ImportRef(module=_unquote(text(src, source)), line=line)
    for clause in node.named_children:
        if clause.type != "import_clause":
            continue
        for part in clause.named_children:
            if part.type == "identifier":  # default import
                ref.names.append("default")
                ref.aliases.append(text(part, source))
            elif part.type == "namespace_import":
                ids = [c for c in part.named_children if c.type == "identifier"]
                ref.alias = text(ids[0], source) if ids else ""
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    ref.names.append(text(spec.child_by_field_name("name"), source))
                    ref.aliases.append(text(spec.child_by_field_name("alias"), source))
    return [ref]


JAVASCRIPT = LanguageSpec(
    name="javascript", load=tree_sitter_javascript.language, query=_COMMON, imports=imports
)
TYPESCRIPT = LanguageSpec(
    name="typescript",
    load=tree_sitter_typescript.language_typescript,
    query=_COMMON + _TS_EXTRA,
    imports=imports,
    recover=typescript_retries,
)
TSX = LanguageSpec(
    name="tsx",
    load=tree_sitter_typescript.language_tsx,
    query=_COMMON + _TS_EXTRA,
    imports=imports,
    recover=typescript_retries,
)
